// Re-sending's bounds (docs/webhooks.md "Replay" and "Re-sending"), on the real API and PostgreSQL, with a daily
// re-send budget of 5 deliveries: one running replay per endpoint (429 with Retry-After while deliveries it queued
// are pending), nothing queued twice, and one budget per partner and audience over 24 hours that retry, recover,
// replay and test all draw from (429 beyond it; endpoints carrying lead data have a budget of their own). No
// webhooks service runs here: what is queued stays pending until the test settles it in SQL, as the worker would.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { uniqueName } from "../../../test/support/env.ts";
import { createPartnerAdmin } from "../src/admin/partner-admin.ts";
import { call, startApi, type ApiHarness, type Partner } from "./support/harness.ts";

const BUDGET = 5;
const RUNNING = {
  status: "error",
  error:
    "A replay to this endpoint is still running (deliveries it queued are pending): retry after Retry-After seconds, once the deliveries list shows them delivered or failed",
};

let api: ApiHarness;
const partners: Partner[] = [];

beforeAll(async () => {
  api = await startApi({ relay: false, webhookResendDailyBudget: BUDGET });
});
afterAll(async () => {
  const ids = partners.map((p) => p.partnerId);
  await api.sql`DELETE FROM webhook_endpoints WHERE partner_id = ANY(${ids}::uuid[])`;
  await api.sql`DELETE FROM webhook_replays WHERE partner_id = ANY(${ids}::uuid[])`;
  await api.sql`DELETE FROM partner_feed WHERE partner_id = ANY(${ids}::uuid[])`;
  await api.stop();
});

/** A partner whose change feed holds `events` listing.published events, 1..events in both numberings. */
async function partnerWithFeed(events: number, leadTracking = false): Promise<Partner> {
  const partner = await api.createPartner({ leadTracking });
  partners.push(partner);
  await api.sql`
    INSERT INTO partner_feed (partner_id, mode, seq, record_seq, type, event_id, record_type, version, data, occurred_at)
    SELECT ${partner.partnerId}::uuid, 'live', n, n, 'listing.published', gen_random_uuid(), 'listing', 1,
           jsonb_build_object('externalListingId', 'L-' || n, 'version', 1), now() - interval '1 hour'
    FROM generate_series(1, ${events}) AS n`;
  return partner;
}

const replay = (key: string, endpointId: string, afterSequence: number, throughSequence: number) =>
  call(api.baseUrl, "POST", `/partner/v1/webhook-endpoints/${endpointId}/replay`, {
    key,
    body: { afterSequence, throughSequence },
  });

async function endpoint(key: string, events = ["listing.published"]): Promise<string> {
  const id = uniqueName("crm");
  const res = await call(api.baseUrl, "PUT", `/partner/v1/webhook-endpoints/${id}`, {
    key,
    body: { url: "https://crm.example.com/hooks", events },
  });
  expect(res.status).toBe(201);
  return id;
}

/** What the webhooks service would do: every pending delivery of the partner delivered. */
const deliverAll = (partner: Partner) =>
  api.sql`UPDATE webhook_deliveries SET status = 'delivered', next_attempt_at = NULL, delivered_at = now() WHERE partner_id = ${partner.partnerId}::uuid AND status = 'pending'`;

const pendingOf = async (partner: Partner) =>
  (
    await api.sql`SELECT count(*)::int AS n FROM webhook_deliveries WHERE partner_id = ${partner.partnerId}::uuid AND status = 'pending'`
  )[0]!.n as number;

test("one running replay per endpoint: a repeat queues nothing twice, another range answers 429 with Retry-After until the first is done", async () => {
  const partner = await partnerWithFeed(5);
  const ep = await endpoint(partner.apiKey);
  expect(await replay(partner.apiKey, ep, 0, 3)).toMatchObject({ status: 202, body: { queued: 3 } });
  // The same range again while it is queued: nothing new (no second copy of what is waiting).
  expect(await replay(partner.apiKey, ep, 0, 3)).toMatchObject({ status: 202, body: { queued: 0 } });
  expect(await pendingOf(partner)).toBe(3);
  // Another range while the first replay runs.
  const second = await replay(partner.apiKey, ep, 3, 5);
  expect({ status: second.status, body: second.body }).toEqual({ status: 429, body: RUNNING });
  expect(Number(second.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(await pendingOf(partner)).toBe(3);
  // Another endpoint of the partner is not held up by it.
  expect(await replay(partner.apiKey, await endpoint(partner.apiKey), 0, 1)).toMatchObject({ status: 202 });

  await deliverAll(partner);
  expect(await replay(partner.apiKey, ep, 3, 4)).toMatchObject({ status: 202, body: { queued: 1 } });
});

test("the partner's daily budget: a replay that would go beyond it answers 429 with when it fits again, on any endpoint", async () => {
  const partner = await partnerWithFeed(8);
  const [a, b] = [await endpoint(partner.apiKey), await endpoint(partner.apiKey)];
  expect(await replay(partner.apiKey, a, 0, 3)).toMatchObject({ status: 202, body: { queued: 3 } });
  await deliverAll(partner);
  // A re-sent delivery spends the budget as a new one does.
  for (const ep of [a, b]) {
    const res = await replay(partner.apiKey, ep, 0, 3);
    expect({ ep, status: res.status, body: res.body }).toEqual({
      ep,
      status: 429,
      body: {
        status: "error",
        error:
          "Daily re-send budget reached: 3 of 5 deliveries re-sent in the last 24 hours (retry, recover, replay and test together), and this would queue 3 more; retry after Retry-After seconds or narrow the range",
      },
    });
    // The first replay leaves the 24 hours in a day.
    const retryAfter = Number(res.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(86_400 - 120);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
  }
  expect(await pendingOf(partner)).toBe(0);
  // What fits in the rest goes.
  expect(await replay(partner.apiKey, b, 0, 2)).toMatchObject({ status: 202, body: { queued: 2 } });
  // A range larger than the whole budget can never go: 400, narrow it.
  await deliverAll(partner);
  expect((await replay(partner.apiKey, b, 0, 8)).status).toBe(400);
});

test("lead endpoints have a budget of their own: neither audience's re-sends spend, or reveal, the other's", async () => {
  const partner = await partnerWithFeed(5, true);
  const admin = createPartnerAdmin({ sql: api.sql, redis: api.redis });
  const keyB = (await admin.createKey({ partnerId: partner.partnerId, leadTracking: false })).apiKey;
  const leadEndpoint = await endpoint(partner.apiKey, ["lead.received", "listing.published"]);
  expect(await replay(partner.apiKey, leadEndpoint, 0, 4)).toMatchObject({ status: 202, body: { queued: 4 } });
  // 4 + 3 is beyond 5, but B's budget is the records audience's: the lead replay spent none of it.
  const plain = await endpoint(keyB);
  expect(await replay(keyB, plain, 0, 3)).toMatchObject({ status: 202, body: { queued: 3 } });
  // Whichever key re-sends to an endpoint without lead data draws from that same budget (2 left)...
  const plainOfA = await endpoint(partner.apiKey);
  expect((await replay(partner.apiKey, plainOfA, 0, 3)).status).toBe(429);
  expect(await replay(partner.apiKey, plainOfA, 0, 2)).toMatchObject({ status: 202, body: { queued: 2 } });
  // ...and the lead endpoint's budget still has its 1 left, whatever the records audience spent.
  await deliverAll(partner);
  expect(await replay(partner.apiKey, leadEndpoint, 0, 1)).toMatchObject({ status: 202, body: { queued: 1 } });
  await deliverAll(partner);
  expect((await ping(keyB, plain)).status).toBe(429);
  expect((await ping(partner.apiKey, leadEndpoint)).status).toBe(429);
});

const ping = (key: string, endpointId: string) =>
  call(api.baseUrl, "POST", `/partner/v1/webhook-endpoints/${endpointId}/test`, { key });
const retry = (key: string, deliveryId: string) =>
  call(api.baseUrl, "POST", `/partner/v1/webhook-deliveries/${deliveryId}/retry`, { key });
const recover = (key: string, endpointId: string, since = "1970-01-01T00:00:00Z") =>
  call(api.baseUrl, "POST", `/partner/v1/webhook-endpoints/${endpointId}/recover?since=${encodeURIComponent(since)}`, {
    key,
  });
const setEnabled = (key: string, endpointId: string, enabled: boolean) =>
  call(api.baseUrl, "PUT", `/partner/v1/webhook-endpoints/${endpointId}`, { key, body: { enabled } });

/** `n` failed deliveries of the endpoint, created a minute ago, oldest first; their IDs. */
async function failedDeliveries(partner: Partner, endpointId: string, n: number): Promise<string[]> {
  const rows = await api.sql`
    INSERT INTO webhook_deliveries (id, endpoint_id, partner_id, event_id, event_type, payload, status, attempt_count, round_start, last_error, created_at)
    SELECT gen_random_uuid(), e.id, e.partner_id, gen_random_uuid(), 'listing.published', '{"type":"listing.published"}', 'failed', 10, 0, 'HTTP 500',
           now() - interval '1 minute' + i * interval '1 millisecond'
    FROM webhook_endpoints e, generate_series(1, ${n}) AS i
    WHERE e.partner_id = ${partner.partnerId}::uuid AND e.external_id = ${endpointId}
    RETURNING id::text`;
  return rows.map((r) => r.id as string);
}

const statusOf = async (deliveryId: string) =>
  (await api.sql`SELECT status FROM webhook_deliveries WHERE id = ${deliveryId}::uuid`)[0]!.status as string;

test("retry, recover, replay and test draw from one budget: once it is spent, each of them answers 429", async () => {
  const partner = await partnerWithFeed(3);
  const ep = await endpoint(partner.apiKey);
  const [d1, d2] = await failedDeliveries(partner, ep, 2);
  expect((await ping(partner.apiKey, ep)).status).toBe(202); // 1
  expect((await retry(partner.apiKey, d1!)).status).toBe(202); // 2
  expect(await recover(partner.apiKey, ep)).toMatchObject({ status: 202, body: { requeued: 1, notQueued: 0 } }); // 3
  expect(await replay(partner.apiKey, ep, 0, 2)).toMatchObject({ status: 202, body: { queued: 2 } }); // 5
  await deliverAll(partner);
  await api.sql`UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL WHERE id = ${d2!}::uuid`;
  for (const [what, res] of [
    ["test", await ping(partner.apiKey, ep)],
    ["retry", await retry(partner.apiKey, d1!)],
    ["recover", await recover(partner.apiKey, ep)],
    ["replay", await replay(partner.apiKey, ep, 2, 3)],
  ] as const) {
    expect({ what, status: res.status, error: res.body.error }).toEqual({
      what,
      status: 429,
      error: expect.stringMatching(/^Daily re-send budget reached: 5 of 5 deliveries re-sent in the last 24 hours/),
    });
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(86_400 - 120);
  }
  // Nothing was queued by the refused requests.
  expect(await pendingOf(partner)).toBe(0);
  expect(await statusOf(d2!)).toBe("failed");
});

test("recover since 1970 queues only what the budget has room for, oldest first; the rest stays failed and is counted", async () => {
  const partner = await partnerWithFeed(0);
  const ep = await endpoint(partner.apiKey);
  const ids = await failedDeliveries(partner, ep, 8);
  expect(await recover(partner.apiKey, ep)).toMatchObject({ status: 202, body: { requeued: 5, notQueued: 3 } });
  expect(await Promise.all(ids.map(statusOf))).toEqual([...Array(5).fill("pending"), ...Array(3).fill("failed")]);
  await deliverAll(partner);
  const again = await recover(partner.apiKey, ep);
  expect(again.status).toBe(429);
  expect(await pendingOf(partner)).toBe(0);
});

test("disabling and enabling an endpoint cannot re-send its deliveries without end: each recover after it draws from the budget", async () => {
  const partner = await partnerWithFeed(0);
  const ep = await endpoint(partner.apiKey);
  // Two deliveries waiting (pending): disabling fails them, recover sends them again, and so on.
  const ids = await failedDeliveries(partner, ep, 2);
  await api.sql`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now() + interval '1 hour' WHERE id = ANY(${ids}::uuid[])`;
  const requeued: number[] = [];
  for (let cycle = 0; cycle < 5; cycle++) {
    expect((await setEnabled(partner.apiKey, ep, false)).status).toBe(200);
    expect(await pendingOf(partner)).toBe(0);
    expect((await setEnabled(partner.apiKey, ep, true)).status).toBe(200);
    const res = await recover(partner.apiKey, ep);
    if (res.status === 429) break;
    expect(res.status).toBe(202);
    requeued.push(res.body.requeued);
  }
  // 2 + 2 + 1 of the budget of 5, then 429: five re-sends in all, not one more.
  expect(requeued).toEqual([2, 2, 1]);
});

test("nothing is queued twice: a retry of a delivery still queued, and a recover, leave pending deliveries as they are and draw nothing", async () => {
  const partner = await partnerWithFeed(0);
  const ep = await endpoint(partner.apiKey);
  const [d] = await failedDeliveries(partner, ep, 1);
  expect((await retry(partner.apiKey, d!)).status).toBe(202);
  const queued = await api.sql`SELECT claim_token, round_start FROM webhook_deliveries WHERE id = ${d!}::uuid`;
  for (let i = 0; i < 8; i++) {
    expect(await retry(partner.apiKey, d!)).toMatchObject({ status: 202, body: { deliveryId: d } });
    expect(await recover(partner.apiKey, ep)).toMatchObject({ status: 202, body: { requeued: 0, notQueued: 0 } });
  }
  // The same queued delivery, untouched: no new claim token, no new round.
  expect(await api.sql`SELECT claim_token, round_start FROM webhook_deliveries WHERE id = ${d!}::uuid`).toEqual(queued);
  // One drawn of five: four pings still fit.
  for (let i = 0; i < 4; i++) expect((await ping(partner.apiKey, ep)).status).toBe(202);
  expect((await ping(partner.apiKey, ep)).status).toBe(429);
});
