// Replay's bounds (docs/webhooks.md "Replay"), on the real API and PostgreSQL, with a daily budget of 5 replayed
// deliveries: one running replay per endpoint (429 with Retry-After while deliveries it queued are pending),
// repeats do not queue again what is still queued, and the partner's budget over 24 hours (429 beyond it, counting
// for a key without lead tracking only the endpoints it can see). No webhooks service runs here: what a replay
// queues stays pending until the test settles it in SQL, as the worker would.
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
  api = await startApi({ relay: false, webhookReplayDailyBudget: BUDGET });
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
          "Daily replay budget reached: 3 of 5 deliveries replayed in the last 24 hours, and this range would queue 3 more; retry after Retry-After seconds or narrow the range",
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

test("a key without lead tracking's budget leaves out replays to lead endpoints (it cannot see them)", async () => {
  const partner = await partnerWithFeed(5, true);
  const admin = createPartnerAdmin({ sql: api.sql, redis: api.redis });
  const keyB = (await admin.createKey({ partnerId: partner.partnerId, leadTracking: false })).apiKey;
  const leadEndpoint = await endpoint(partner.apiKey, ["lead.received", "listing.published"]);
  expect(await replay(partner.apiKey, leadEndpoint, 0, 4)).toMatchObject({ status: 202, body: { queued: 4 } });
  // 4 + 3 is beyond 5, but B must not learn of the 4.
  expect(await replay(keyB, await endpoint(keyB), 0, 3)).toMatchObject({ status: 202, body: { queued: 3 } });
  // The key with lead tracking sees (and counts) both.
  await deliverAll(partner);
  expect((await replay(partner.apiKey, leadEndpoint, 0, 1)).status).toBe(429);
});
