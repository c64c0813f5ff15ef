// The request log the portal's "API requests" page reads (issue 42): every request a key authenticated, with its
// status, duration and request ID, the error answer of a 4xx, never a body of a success; the daily counts; and the
// retention that keeps 7 days by emptying the ring's old day.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { pruneRequestLog } from "../src/request-log/request-log-retention.ts";
import { requestLogSlot, slotToEmpty } from "../src/request-log/request-log-slots.ts";
import { call, sample, startApi, type ApiHarness, type Partner } from "./support/harness.ts";
import { uniqueName } from "../../../test/support/env.ts";

let api: ApiHarness;
let partner: Partner;

beforeAll(async () => {
  api = await startApi({ relay: false, requestLog: true });
  partner = await api.createPartner({ test: true });
});
afterAll(() => api?.stop());

/** The request's row, once written: a request is recorded just after its answer went out, then flushed. */
async function logOf(requestId: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    await api.requestLog!.flush();
    const rows =
      await api.sql`SELECT * FROM api_request_log WHERE partner_id = ${partner.partnerId} AND request_id = ${requestId}`;
    if (rows.length > 0 || Date.now() > deadline) return rows;
    await Bun.sleep(20);
  }
}

describe("the request log", () => {
  test("records a successful write without its body, with the key, status, duration and request ID", async () => {
    const brokerId = uniqueName("broker");
    const requestId = uniqueName("req");
    const res = await call(api.baseUrl, "PUT", `/partner/v1/brokers/${brokerId}?dryRun=false`, {
      key: partner.apiKey,
      body: sample.broker(),
      headers: { "x-request-id": requestId },
    });
    expect(res.status).toBe(201);
    const [row] = await logOf(requestId);
    expect(row).toMatchObject({
      mode: "live",
      key_id: partner.keyId,
      method: "PUT",
      path: `/partner/v1/brokers/${brokerId}?dryRun=false`,
      status: 201,
      error: null,
    });
    expect(row!.duration_ms).toBeGreaterThan(0);
    expect(row!.slot).toBe(requestLogSlot(new Date(row!.at).getTime()));
    // Nothing of the body anywhere in the row.
    expect(JSON.stringify(row)).not.toContain("Jane Broker");
  });

  test("keeps the error answer of a 4xx, and a test key's requests apart as test mode", async () => {
    const requestId = uniqueName("req");
    const res = await call(api.baseUrl, "PUT", `/partner/v1/listings/${uniqueName("l")}`, {
      key: partner.test!.apiKey,
      body: { status: "NOPE" },
      headers: { "x-request-id": requestId },
    });
    expect(res.status).toBe(400);
    const [row] = await logOf(requestId);
    expect(row!.mode).toBe("test");
    expect(row!.status).toBe(400);
    expect(row!.error).toEqual(res.body);
  });

  test("leaves out requests no key authenticated (nobody to show them to)", async () => {
    const requestId = uniqueName("req");
    expect(
      (
        await call(api.baseUrl, "GET", "/partner/v1/listings", {
          key: "pss_live_nope",
          headers: { "x-request-id": requestId },
        })
      ).status,
    ).toBe(401);
    await api.requestLog!.flush();
    const rows = await api.sql`SELECT 1 FROM api_request_log WHERE request_id = ${requestId}`;
    expect(rows).toHaveLength(0);
  });

  test("counts requests, 4xx and 5xx per partner, mode and UTC day", async () => {
    const before =
      await api.sql`SELECT requests, client_errors FROM api_request_daily WHERE partner_id = ${partner.partnerId} AND mode = 'live' AND day = (now() AT TIME ZONE 'UTC')::date`;
    await partner.get("/partner/v1/health");
    const missing = uniqueName("missing");
    await partner.get(`/partner/v1/listings/${missing}`);
    // Both recorded (the second after the first), and flushed.
    const deadline = Date.now() + 10_000;
    while (
      (
        await api.sql`SELECT 1 FROM api_request_log WHERE partner_id = ${partner.partnerId} AND path = ${`/partner/v1/listings/${missing}`}`
      ).length === 0 &&
      Date.now() < deadline
    ) {
      await api.requestLog!.flush();
      await Bun.sleep(20);
    }
    const [after] =
      await api.sql`SELECT requests, client_errors FROM api_request_daily WHERE partner_id = ${partner.partnerId} AND mode = 'live' AND day = (now() AT TIME ZONE 'UTC')::date`;
    expect(after!.requests - (before[0]?.requests ?? 0)).toBe(2);
    expect(after!.client_errors - (before[0]?.client_errors ?? 0)).toBe(1);
  });
});

describe("the request log's retention", () => {
  test("empties tomorrow's slot (the day eight days ago) and keeps rows of the last 7 days", async () => {
    const now = Date.now();
    const slot = slotToEmpty(now);
    const old = new Date(now - 8 * 86_400_000);
    const marker = uniqueName("old");
    await api.sql`
      INSERT INTO api_request_log (slot, at, partner_id, mode, key_id, method, path, status, duration_ms, request_id)
      VALUES (${slot}, ${old}, ${partner.partnerId}, 'live', ${partner.keyId}, 'GET', '/partner/v1/health', 200, 1, ${marker})`;
    const pruned = await pruneRequestLog(api.sql, now);
    expect(pruned).toMatchObject({ partition: `api_request_log_${slot}`, truncated: true });
    expect(await api.sql`SELECT 1 FROM api_request_log WHERE request_id = ${marker}`).toHaveLength(0);
  });

  test("a recent row already in tomorrow's slot (a clock ahead) is kept: only the old rows are deleted", async () => {
    const now = Date.now();
    const slot = slotToEmpty(now);
    const [oldMarker, aheadMarker] = [uniqueName("old"), uniqueName("ahead")];
    await api.sql`
      INSERT INTO api_request_log (slot, at, partner_id, mode, key_id, method, path, status, duration_ms, request_id)
      VALUES (${slot}, ${new Date(now - 8 * 86_400_000)}, ${partner.partnerId}, 'live', ${partner.keyId}, 'GET', '/x', 200, 1, ${oldMarker}),
             (${slot}, ${new Date(now)}, ${partner.partnerId}, 'live', ${partner.keyId}, 'GET', '/x', 200, 1, ${aheadMarker})`;
    const pruned = await pruneRequestLog(api.sql, now);
    expect(pruned.truncated).toBe(false);
    expect(await api.sql`SELECT 1 FROM api_request_log WHERE request_id = ${oldMarker}`).toHaveLength(0);
    expect(await api.sql`SELECT 1 FROM api_request_log WHERE request_id = ${aheadMarker}`).toHaveLength(1);
    await api.sql`DELETE FROM api_request_log WHERE request_id = ${aheadMarker}`;
  });
});
