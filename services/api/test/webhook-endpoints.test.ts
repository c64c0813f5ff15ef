// The partner's webhook endpoints and deliveries through the real API and PostgreSQL. Sending is the webhooks
// service's (services/webhooks/test): here the API's records and queueing are checked.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_WEBHOOK_ENDPOINTS } from "@pss/contracts";
import { testWebhookSecrets, uniqueName } from "../../../test/support/env.ts";
import { call, startApi, type ApiHarness, type Partner } from "./support/harness.ts";

let api: ApiHarness;
let partner: Partner;
let leadTracker: Partner;

beforeAll(async () => {
  api = await startApi({ relay: false });
  partner = await api.createPartner();
  leadTracker = await api.createPartner({ leadTracking: true });
});
afterAll(async () => {
  await api.sql`DELETE FROM webhook_endpoints WHERE partner_id = ANY(${[partner.partnerId, leadTracker.partnerId]}::uuid[])`;
  await api.stop();
});

const put = (p: Partner, id: string, body: unknown) =>
  call(api.baseUrl, "PUT", `/partner/v1/webhook-endpoints/${encodeURIComponent(id)}`, { key: p.apiKey, body });
const post = (p: Partner, path: string) => call(api.baseUrl, "POST", `/partner/v1${path}`, { key: p.apiKey });
const get = (p: Partner, path: string) => call(api.baseUrl, "GET", `/partner/v1${path}`, { key: p.apiKey });
const del = (p: Partner, path: string) => call(api.baseUrl, "DELETE", `/partner/v1${path}`, { key: p.apiKey });
const endpointBody = (overrides: Record<string, unknown> = {}) => ({
  url: "https://crm.example.com/hooks/pss",
  events: ["listing.published", "listing.unpublished"],
  ...overrides,
});

/** Marks deliveries failed for good (their schedule used up), as the worker leaves them. */
const failForGood = (ids: string[]) =>
  api.sql`UPDATE webhook_deliveries SET status = 'failed', attempt_count = 10, next_attempt_at = NULL WHERE id = ANY(${ids}::uuid[])`;

/** A new endpoint of `partner` with `pings` test deliveries, all failed for good. */
async function endpointWithFailedPings(pings: number): Promise<{ id: string; ids: string[] }> {
  const id = uniqueName("crm");
  await put(partner, id, endpointBody());
  const ids: string[] = [];
  for (let i = 0; i < pings; i++) ids.push((await post(partner, `/webhook-endpoints/${id}/test`)).body.deliveryId);
  await failForGood(ids);
  return { id, ids };
}

describe("webhook endpoints: PUT semantics like listings", () => {
  test("a new endpointId creates the endpoint (201) and shows its whsec_ secret once; an identical repeat is 200 without it", async () => {
    const id = uniqueName("crm");
    const created = await put(partner, id, endpointBody({ description: "Our CRM" }));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      status: "success",
      message: "Webhook endpoint created",
      endpoint: {
        endpointId: id,
        url: "https://crm.example.com/hooks/pss",
        events: ["listing.published", "listing.unpublished"],
        description: "Our CRM",
        enabled: true,
        disabledReason: null,
        version: 1,
      },
    });
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.body.secret.slice(6), "base64")).toHaveLength(32);

    // Events in another order are the same subscription: nothing changes, no second secret.
    const repeated = await put(
      partner,
      id,
      endpointBody({ description: "Our CRM", events: ["listing.unpublished", "listing.published"] }),
    );
    expect(repeated.status).toBe(200);
    expect(repeated.body.message).toBe("Webhook endpoint updated");
    expect(repeated.body.secret).toBeUndefined();
    expect(repeated.body.endpoint.version).toBe(1);
    expect(repeated.body.endpoint.updatedAt).toBe(created.body.endpoint.updatedAt);
  });

  test("an update sends only what changes; null clears the description; the secret is never read back", async () => {
    const id = uniqueName("crm");
    await put(partner, id, endpointBody({ description: "to be cleared" }));
    const updated = await put(partner, id, { events: ["listing.media.processed"], description: null });
    expect(updated.status).toBe(200);
    expect(updated.body.endpoint).toMatchObject({
      url: "https://crm.example.com/hooks/pss",
      events: ["listing.media.processed"],
      description: null,
      version: 2,
    });
    const read = await get(partner, `/webhook-endpoints/${id}`);
    expect(read.status).toBe(200);
    expect(read.body.endpoint).toEqual(updated.body.endpoint);
    expect(JSON.stringify(read.body)).not.toContain("whsec_");
    // Stored encrypted: the database holds no secret in clear.
    const [row] =
      await api.sql`SELECT secret_encrypted FROM webhook_endpoints WHERE partner_id = ${partner.partnerId} AND external_id = ${id}`;
    expect(row!.secret_encrypted).toStartWith("v1.");
    expect(testWebhookSecrets().decrypt(row!.secret_encrypted)).toStartWith("whsec_");
  });

  test("creating without url or events is 400 naming both; bad values are 400 naming the field; nothing is stored", async () => {
    const id = uniqueName("crm");
    const missing = await put(partner, id, { description: "no url" });
    expect(missing.status).toBe(400);
    expect(missing.body.details.map((d: { path: string }) => d.path)).toEqual(["url", "events"]);
    expect((await put(partner, id, endpointBody({ url: "ftp://crm.example.com/x" }))).body.error).toStartWith("url:");
    expect((await put(partner, id, endpointBody({ events: [] }))).status).toBe(400);
    expect((await put(partner, id, endpointBody({ events: ["listing.published", "listing.published"] }))).status).toBe(
      400,
    );
    const unknown = await put(partner, id, endpointBody({ events: ["listing.sold"] }));
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toContain("listing.published");
    expect((await put(partner, id, endpointBody({ secret: "mine" }))).body.error).toBe("secret: is not a known field");
    expect((await get(partner, `/webhook-endpoints/${id}`)).status).toBe(404);
  });

  test("lead.received carries lead counts: only a key with lead tracking may subscribe to it", async () => {
    expect((await put(partner, uniqueName("leads"), endpointBody({ events: ["lead.received"] }))).status).toBe(401);
    expect((await put(leadTracker, uniqueName("leads"), endpointBody({ events: ["lead.received"] }))).status).toBe(201);
  });

  test("another partner's endpoint is not found; DELETE removes it and then it is 404", async () => {
    const id = uniqueName("crm");
    await put(partner, id, endpointBody());
    expect((await get(leadTracker, `/webhook-endpoints/${id}`)).status).toBe(404);
    expect((await del(leadTracker, `/webhook-endpoints/${id}`)).status).toBe(404);
    const deleted = await del(partner, `/webhook-endpoints/${id}`);
    expect(deleted).toMatchObject({ status: 200, body: { status: "success", message: "Webhook endpoint deleted" } });
    expect((await get(partner, `/webhook-endpoints/${id}`)).body).toEqual({
      status: "error",
      error: "Webhook endpoint not found",
    });
    // A new PUT of the same ID creates a new endpoint with a new secret.
    expect((await put(partner, id, endpointBody())).status).toBe(201);
  });

  test("the list pages through every endpoint once", async () => {
    const p = await api.createPartner();
    // The five endpoints' row IDs cross a power of ten (…98, …99, …100 …): paging must follow numbers, not text.
    const [{ last }] = (await api.sql`SELECT last_value::text AS last FROM webhook_endpoints_id_seq`) as unknown as [
      { last: string },
    ];
    await api.sql`SELECT setval('webhook_endpoints_id_seq', ${String(10 ** (last.length + 1) - 3)}::bigint)`;
    const ids = Array.from({ length: 5 }, (_, i) => `page-${i}`);
    for (const id of ids) expect((await put(p, id, endpointBody())).status).toBe(201);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: any } = await get(
        p,
        `/webhook-endpoints?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
      );
      expect(page.status).toBe(200);
      expect(page.body.results.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.results.map((e: { endpointId: string }) => e.endpointId));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(ids);
    expect((await get(p, "/webhook-endpoints?cursor=bogus")).body.error).toBe(
      "cursor is not valid; pass nextCursor from the previous page unchanged",
    );
    await api.sql`DELETE FROM webhook_endpoints WHERE partner_id = ${p.partnerId}`;
  });

  test(`a partner has at most ${MAX_WEBHOOK_ENDPOINTS} endpoints (409), counted exactly under concurrent creates`, async () => {
    const p = await api.createPartner();
    const results = await Promise.all(
      Array.from({ length: MAX_WEBHOOK_ENDPOINTS + 5 }, (_, i) => put(p, `many-${i}`, endpointBody())),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(MAX_WEBHOOK_ENDPOINTS);
    const refused = results.filter((r) => r.status === 409);
    expect(refused).toHaveLength(5);
    expect(refused[0]!.body.error).toBe(
      `A partner may have at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints; delete one first`,
    );
    await api.sql`DELETE FROM webhook_endpoints WHERE partner_id = ${p.partnerId}`;
  });
});

describe("secrets, pings and deliveries", () => {
  test("rotate-secret returns a new secret; the previous one keeps signing for 24 hours", async () => {
    const id = uniqueName("crm");
    const created = await put(partner, id, endpointBody());
    const rotated = await post(partner, `/webhook-endpoints/${id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.body.secret);
    const overlapMs = Date.parse(rotated.body.previousSecretExpiresAt) - Date.now();
    expect(overlapMs).toBeGreaterThan(23.9 * 3600_000);
    expect(overlapMs).toBeLessThanOrEqual(24 * 3600_000);
    const [row] =
      await api.sql`SELECT secret_encrypted, previous_secret_encrypted FROM webhook_endpoints WHERE partner_id = ${partner.partnerId} AND external_id = ${id}`;
    const box = testWebhookSecrets();
    expect(box.decrypt(row!.secret_encrypted)).toBe(rotated.body.secret);
    expect(box.decrypt(row!.previous_secret_encrypted)).toBe(created.body.secret);
    expect((await get(partner, `/webhook-endpoints/${id}`)).body.endpoint.previousSecretExpiresAt).toBe(
      rotated.body.previousSecretExpiresAt,
    );
    expect((await post(partner, `/webhook-endpoints/${uniqueName("nope")}/rotate-secret`)).status).toBe(404);
  });

  test("test queues a signed ping that the deliveries list shows as pending, with its payload", async () => {
    const id = uniqueName("crm");
    await put(partner, id, endpointBody());
    const queued = await post(partner, `/webhook-endpoints/${id}/test`);
    expect(queued.status).toBe(202);
    expect(queued.body.deliveryId).toMatch(/^[0-9a-f-]{36}$/);
    const list = await get(partner, `/webhook-deliveries?endpointId=${id}`);
    expect(list.status).toBe(200);
    expect(list.body.results).toHaveLength(1);
    expect(list.body.results[0]).toMatchObject({
      deliveryId: queued.body.deliveryId,
      endpointId: id,
      eventType: "ping",
      status: "pending",
      attemptCount: 0,
      attempts: [],
      payload: { type: "ping", data: { endpointId: id, version: 1 } },
    });
    expect(Date.parse(list.body.results[0].nextAttemptAt)).toBeLessThanOrEqual(Date.now() + 1000);
    expect(list.body.nextCursor).toBeNull();
  });

  test("the deliveries list filters by endpoint, status and event type, newest first, and pages", async () => {
    const id = uniqueName("crm");
    await put(partner, id, endpointBody());
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await post(partner, `/webhook-endpoints/${id}/test`)).body.deliveryId);
    await api.sql`UPDATE webhook_deliveries SET status = 'failed', last_error = 'HTTP 500', last_status_code = 500 WHERE id = ${ids[0]!}::uuid`;
    const failed = await get(partner, `/webhook-deliveries?endpointId=${id}&status=failed`);
    expect(failed.body.results.map((d: { deliveryId: string }) => d.deliveryId)).toEqual([ids[0]]);
    expect(failed.body.results[0]).toMatchObject({ lastStatusCode: 500, lastError: "HTTP 500", nextAttemptAt: null });
    expect(
      (await get(partner, `/webhook-deliveries?endpointId=${id}&eventType=listing.published`)).body.results,
    ).toEqual([]);
    // Filtering by lead.received is naming lead data: 401 for a key without lead tracking (webhook-lead-permission.test.ts).
    expect((await get(partner, `/webhook-deliveries?endpointId=${id}&eventType=lead.received`)).status).toBe(401);
    const first = await get(partner, `/webhook-deliveries?endpointId=${id}&limit=2`);
    const second = await get(partner, `/webhook-deliveries?endpointId=${id}&limit=2&cursor=${first.body.nextCursor}`);
    expect([...first.body.results, ...second.body.results].map((d: { deliveryId: string }) => d.deliveryId)).toEqual(
      [...ids].reverse(),
    );
    expect(second.body.nextCursor).toBeNull();
    expect((await get(partner, "/webhook-deliveries?status=lost")).status).toBe(400);
    expect((await get(partner, "/webhook-deliveries?cursor=abc")).status).toBe(400);
    // Another partner sees none of them.
    expect((await get(leadTracker, `/webhook-deliveries?endpointId=${id}`)).body.results).toEqual([]);
  });

  test("retry queues one delivery again with a fresh schedule; recover queues every failed one since a time", async () => {
    const { id, ids } = await endpointWithFailedPings(3);
    await api.sql`UPDATE webhook_deliveries SET created_at = now() - interval '2 days' WHERE id = ${ids[0]!}::uuid`;

    const retried = await post(partner, `/webhook-deliveries/${ids[0]}/retry`);
    expect(retried).toMatchObject({ status: 202, body: { status: "success", deliveryId: ids[0] } });
    const [row] =
      await api.sql`SELECT status, round_start, attempt_count FROM webhook_deliveries WHERE id = ${ids[0]!}::uuid`;
    expect(row).toMatchObject({ status: "pending", round_start: 10, attempt_count: 10 });

    const since = new Date(Date.now() - 3600_000).toISOString();
    const recovered = await post(partner, `/webhook-endpoints/${id}/recover?since=${encodeURIComponent(since)}`);
    expect(recovered).toMatchObject({ status: 202, body: { status: "success", requeued: 2 } });
    const statuses = await api.sql`SELECT status FROM webhook_deliveries WHERE id = ANY(${ids}::uuid[])`;
    expect(statuses.map((r) => r.status)).toEqual(["pending", "pending", "pending"]);

    expect((await post(partner, `/webhook-deliveries/${crypto.randomUUID()}/retry`)).body.error).toBe(
      "Webhook delivery not found",
    );
    expect((await post(partner, "/webhook-deliveries/not-a-uuid/retry")).status).toBe(400);
    expect((await post(leadTracker, `/webhook-deliveries/${ids[1]}/retry`)).status).toBe(404);
    expect((await post(partner, `/webhook-endpoints/${id}/recover`)).status).toBe(400);
    expect((await post(partner, `/webhook-endpoints/${id}/recover?since=yesterday`)).status).toBe(400);
  });

  test("a since before anything we store (even year 0 in UTC after its offset) recovers from the beginning, never 500", async () => {
    const { id, ids } = await endpointWithFailedPings(2);
    // 0001-01-01T00:00:00+01:32 is 0000-12-31T22:28Z: no year 0 in PostgreSQL's text form (found by Schemathesis).
    for (const since of ["0001-01-01T00:00:00+01:32", "1969-07-20T20:17:00Z"]) {
      const res = await post(partner, `/webhook-endpoints/${id}/recover?since=${encodeURIComponent(since)}`);
      expect(res).toMatchObject({ status: 202, body: { status: "success", requeued: 2 } });
      await failForGood(ids);
    }
  });

  test("disabling an endpoint fails its pending deliveries with the reason; test, retry and recover are 409 until it is enabled again", async () => {
    const id = uniqueName("crm");
    await put(partner, id, endpointBody());
    const deliveryId = (await post(partner, `/webhook-endpoints/${id}/test`)).body.deliveryId;
    const disabled = await put(partner, id, { enabled: false });
    expect(disabled.body.endpoint).toMatchObject({
      enabled: false,
      disabledReason: 'disabled by the partner (a PUT with "enabled": false)',
    });
    expect(disabled.body.endpoint.disabledAt).not.toBeNull();
    const [delivery] = (await get(partner, `/webhook-deliveries?endpointId=${id}`)).body.results;
    expect(delivery).toMatchObject({
      deliveryId,
      status: "failed",
      lastError: 'endpoint disabled: disabled by the partner (a PUT with "enabled": false)',
    });

    const conflict = await post(partner, `/webhook-endpoints/${id}/test`);
    expect(conflict).toMatchObject({
      status: 409,
      body: {
        status: "error",
        error: 'Webhook endpoint is disabled; re-enable it with a PUT carrying "enabled": true first',
      },
    });
    expect((await post(partner, `/webhook-deliveries/${deliveryId}/retry`)).status).toBe(409);
    expect((await post(partner, `/webhook-endpoints/${id}/recover?since=2020-01-01T00:00:00Z`)).status).toBe(409);

    const enabled = await put(partner, id, { enabled: true });
    expect(enabled.body.endpoint).toMatchObject({
      enabled: true,
      disabledReason: null,
      disabledAt: null,
      failingSince: null,
    });
    expect((await post(partner, `/webhook-endpoints/${id}/recover?since=2020-01-01T00:00:00Z`)).body.requeued).toBe(1);
  });

  test("one PUT may re-enable an endpoint and move it to a new URL (the contract test found a 500 here)", async () => {
    const id = uniqueName("crm");
    await put(partner, id, endpointBody({ enabled: false }));
    await api.sql`UPDATE webhook_endpoints SET failing_since = now() WHERE partner_id = ${partner.partnerId} AND external_id = ${id}`;
    const moved = await put(partner, id, { enabled: true, url: "https://crm.example.com/hooks/new" });
    expect(moved.status).toBe(200);
    expect(moved.body.endpoint).toMatchObject({
      enabled: true,
      url: "https://crm.example.com/hooks/new",
      disabledReason: null,
      failingSince: null,
      version: 2,
    });
  });
});
