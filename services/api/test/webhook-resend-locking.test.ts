// Re-sends check and act under one lock (docs/webhooks.md "Re-sending"), on the real API and PostgreSQL: while a
// re-send request runs, the test holds a transaction that deletes its endpoint, subscribes it to lead.received, or
// disables it, as a concurrent DELETE or PUT would, and commits once the request waits on it. The request then
// answers as for the endpoint's new state (404, 404 for a key without lead tracking, 409) and queues nothing; it
// never acts on the state it read before (a ping for a deleted endpoint was a foreign-key 500, a retry for a key
// without lead tracking went to a lead endpoint, a replay queued deliveries of a disabled endpoint).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { WebhookErrorMessages } from "@pss/contracts";
import { uniqueName } from "../../../test/support/env.ts";
import { createPartnerAdmin } from "../src/admin/partner-admin.ts";
import { call, startApi, type ApiHarness, type Partner } from "./support/harness.ts";
import { untilWaitingOnLock } from "./support/lock-waits.ts";

let api: ApiHarness;
let partner: Partner;
/** Without lead tracking. */
let keyB: string;

beforeAll(async () => {
  api = await startApi({ relay: false });
  partner = await api.createPartner({ leadTracking: true });
  keyB = (
    await createPartnerAdmin({ sql: api.sql, redis: api.redis }).createKey({
      partnerId: partner.partnerId,
      leadTracking: false,
    })
  ).apiKey;
  await api.sql`
    INSERT INTO partner_feed (partner_id, mode, seq, record_seq, type, event_id, record_type, version, data, occurred_at)
    SELECT ${partner.partnerId}::uuid, 'live', n, n, 'listing.published', gen_random_uuid(), 'listing', 1,
           jsonb_build_object('externalListingId', 'L-' || n, 'version', 1), now() - interval '1 hour'
    FROM generate_series(1, 3) AS n`;
});
afterAll(async () => {
  await api.sql`DELETE FROM webhook_endpoints WHERE partner_id = ${partner.partnerId}::uuid`;
  await api.sql`DELETE FROM webhook_replays WHERE partner_id = ${partner.partnerId}::uuid`;
  await api.sql`DELETE FROM partner_feed WHERE partner_id = ${partner.partnerId}::uuid`;
  await api.stop();
});

async function endpointOfB(): Promise<string> {
  const id = uniqueName("crm");
  const res = await call(api.baseUrl, "PUT", `/partner/v1/webhook-endpoints/${id}`, {
    key: keyB,
    body: { url: "https://crm.example.com/hooks", events: ["listing.published"] },
  });
  expect(res.status).toBe(201);
  return id;
}

/**
 * Runs `change` (statements on the endpoint) in a transaction of the test, sends `request` meanwhile, and commits
 * the change once the request waits on it (or has answered without waiting). Returns the request's answer.
 */
async function duringChange(
  change: (tx: import("postgres").TransactionSql) => Promise<unknown>,
  request: () => Promise<{ status: number; body: any }>,
) {
  let answer!: Promise<{ status: number; body: any }>;
  await api.sql.begin(async (tx) => {
    await change(tx);
    answer = request();
    await Promise.race([answer, untilWaitingOnLock(api.sql, "webhook_", "the request to wait for the change")]);
  });
  const res = await answer;
  return { status: res.status, body: res.body };
}

const pendingOf = async (endpointId: string) =>
  (
    await api.sql`SELECT count(*)::int AS n FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE e.partner_id = ${partner.partnerId}::uuid AND e.external_id = ${endpointId} AND d.status = 'pending'`
  )[0]!.n as number;

test("a ping while the endpoint is being deleted: 404 once the deletion commits, never a 500", async () => {
  const ep = await endpointOfB();
  const res = await duringChange(
    (tx) => tx`DELETE FROM webhook_endpoints WHERE partner_id = ${partner.partnerId}::uuid AND external_id = ${ep}`,
    () => call(api.baseUrl, "POST", `/partner/v1/webhook-endpoints/${ep}/test`, { key: keyB }),
  );
  expect(res).toEqual({ status: 404, body: { status: "error", error: "Webhook endpoint not found" } });
});

test("a retry by a key without lead tracking while the endpoint is subscribed to lead.received: 404, and the delivery is not re-sent", async () => {
  const ep = await endpointOfB();
  const [d] = await api.sql`
    INSERT INTO webhook_deliveries (id, endpoint_id, partner_id, event_id, event_type, payload, status, attempt_count, last_error)
    SELECT gen_random_uuid(), e.id, e.partner_id, gen_random_uuid(), 'listing.published', '{}', 'failed', 10, 'HTTP 500'
    FROM webhook_endpoints e WHERE e.partner_id = ${partner.partnerId}::uuid AND e.external_id = ${ep}
    RETURNING id::text`;
  const res = await duringChange(
    (tx) => tx`
      UPDATE webhook_endpoints SET events = events || '{lead.received}'::text[], carries_lead_data = true, version = version + 1
      WHERE partner_id = ${partner.partnerId}::uuid AND external_id = ${ep}`,
    () => call(api.baseUrl, "POST", `/partner/v1/webhook-deliveries/${d!.id}/retry`, { key: keyB }),
  );
  expect(res).toEqual({ status: 404, body: { status: "error", error: "Webhook delivery not found" } });
  expect((await api.sql`SELECT status FROM webhook_deliveries WHERE id = ${d!.id}::uuid`)[0]!.status).toBe("failed");
});

test("a replay while the endpoint is being disabled: 409 once the disable commits, and nothing is queued for it", async () => {
  const ep = await endpointOfB();
  const res = await duringChange(
    (tx) => tx`
      UPDATE webhook_endpoints SET enabled = false, disabled_cause = 'partner', disabled_reason = 'disabled by the partner', disabled_at = now(), version = version + 1
      WHERE partner_id = ${partner.partnerId}::uuid AND external_id = ${ep}`,
    () =>
      call(api.baseUrl, "POST", `/partner/v1/webhook-endpoints/${ep}/replay`, {
        key: keyB,
        body: { afterSequence: 0 },
      }),
  );
  expect(res).toEqual({
    status: 409,
    body: { status: "error", error: WebhookErrorMessages.endpointDisabled },
  });
  expect(await pendingOf(ep)).toBe(0);
});
