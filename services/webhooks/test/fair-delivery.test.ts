// Fair delivery (docs/webhooks.md "Fair delivery"), on the real webhooks service, PostgreSQL and receivers on
// loopback: partner P1 points three endpoints at a tarpit (it answers only long after the sender's 2 s timeout),
// one with a backlog of 10,000 deliveries due (written straight to PostgreSQL, as a replay of 10,000 would queue
// them, beyond what the API's replay budget allows in one go), the others with 100 each; partner P2's new delivery
// still arrives within seconds, and P1 never has more attempts in flight than its endpoint and partner limits. And a
// partner retrying its slow deliveries again and again (a retry of a delivery in flight) cannot get past the limits.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { call, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import { uniqueName } from "../../../test/support/env.ts";
import { mostAtOnce, startReceiver, type Receiver } from "./support/receiver.ts";
import { startWebhooks, until, type WebhooksHarness } from "./support/webhooks-harness.ts";

/**
 * The test's clean-up: the partners' endpoints (their deliveries with them). A worker may still be recording an
 * attempt's outcome on one of those rows, so PostgreSQL can pick the clean-up as a deadlock's victim: tried again.
 */
async function removeEndpoints(partnerIds: string[]): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await api.sql`DELETE FROM webhook_endpoints WHERE partner_id = ANY(${partnerIds}::uuid[])`;
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== "40P01" || attempt >= 5) throw err;
      await Bun.sleep(200 * attempt);
    }
  }
}

const BACKLOG = 10_000;
/** Far beyond the sender's timeout (2 s in tests): the sender gives up, the tarpit never answered. */
const TARPIT_MS = 30_000;
const ENDPOINT_CONCURRENCY = 4;
const PARTNER_CONCURRENCY = 6;

let api: ApiHarness;
let receiver: Receiver;
let webhooks: WebhooksHarness;
let p1: Partner;
let p2: Partner;

beforeAll(async () => {
  api = await startApi({ relay: false });
  receiver = startReceiver();
  [p1, p2] = await Promise.all([api.createPartner(), api.createPartner()]);
});
afterAll(async () => {
  await webhooks?.stop();
  receiver?.stop();
  if (api) {
    await removeEndpoints([p1.partnerId, p2.partnerId]);
    await api.stop();
  }
});

async function endpointOf(partner: Partner, path: string): Promise<string> {
  const id = uniqueName("crm");
  const res = await call(api.baseUrl, "PUT", `/partner/v1/webhook-endpoints/${id}`, {
    key: partner.apiKey,
    body: { url: receiver.url(path), events: ["listing.published"] },
  });
  expect(res.status).toBe(201);
  return id;
}

test("a partner with tarpit endpoints and 10,000 deliveries due does not delay another partner's delivery by more than a few seconds, nor holds more slots than its limits", async () => {
  const tarpitPaths = [1, 2, 3].map((i) => `/tarpit/${uniqueName(`p1-${i}`)}`);
  const p2Path = `/hooks/${uniqueName("p2")}`;
  for (const path of tarpitPaths) receiver.script(path, () => ({ status: 204, delayMs: TARPIT_MS }));
  const tarpits: string[] = [];
  for (const path of tarpitPaths) tarpits.push(await endpointOf(p1, path));
  const p2Endpoint = await endpointOf(p2, p2Path);
  // Due a minute ago: before anything P2 queues, in the order a single queue would take them.
  for (const [i, tarpit] of tarpits.entries()) {
    await api.sql`
      INSERT INTO webhook_deliveries (id, endpoint_id, partner_id, event_id, event_type, payload, next_attempt_at, created_at)
      SELECT gen_random_uuid(), e.id, e.partner_id, gen_random_uuid(), 'listing.published',
             '{"type":"listing.published","timestamp":"2026-01-01T00:00:00.000Z","data":{"n":' || n || '}}',
             now() - interval '1 minute', now() - interval '1 minute'
      FROM webhook_endpoints e, generate_series(1, ${i === 0 ? BACKLOG : 100}) AS n
      WHERE e.partner_id = ${p1.partnerId}::uuid AND e.external_id = ${tarpit}`;
  }

  webhooks = await startWebhooks({
    allowedHosts: [receiver.hostPort],
    publicBaseUrl: api.baseUrl,
    partners: [p1.partnerId, p2.partnerId],
    env: {
      WEBHOOK_ENDPOINT_CONCURRENCY: String(ENDPOINT_CONCURRENCY),
      WEBHOOK_PARTNER_CONCURRENCY: String(PARTNER_CONCURRENCY),
    },
  });
  // The worker is busy with the tarpit.
  const tarpitRequests = () => tarpitPaths.flatMap((path) => receiver.requests(path));
  await until("the tarpit to hold requests", () => tarpitRequests().length > 0, 10_000);

  const queuedAt = Date.now();
  const ping = await call(api.baseUrl, "POST", `/partner/v1/webhook-endpoints/${p2Endpoint}/test`, {
    key: p2.apiKey,
  });
  expect(ping.status).toBe(202);
  const arrived = await until("P2's delivery", () => receiver.requests(p2Path)[0], 10_000);
  expect(arrived.headers["webhook-id"]).toBe(ping.body.deliveryId);
  expect(arrived.receivedAt - queuedAt).toBeLessThan(5_000);

  // P1 never had more than its share of attempts at once: within the first timeout (none of them had ended), at most
  // the endpoint's limit per endpoint and the partner's in all (16 slots were free).
  const first = Math.min(...tarpitRequests().map((r) => r.receivedAt));
  const early = (path: string) => receiver.requests(path).filter((r) => r.receivedAt - first < 1_500).length;
  for (const path of tarpitPaths) expect(early(path)).toBeLessThanOrEqual(ENDPOINT_CONCURRENCY);
  expect(tarpitPaths.reduce((n, path) => n + early(path), 0)).toBe(PARTNER_CONCURRENCY);
}, 60_000);

test("retrying slow deliveries again and again never puts more attempts in flight than the caps, nor one delivery on the wire twice at once", async () => {
  // A receiver that answers (204) after 1.5 s, within the sender's 2 s timeout: each attempt holds its slot that long.
  const p3 = await api.createPartner();
  const paths = [1, 2].map((i) => `/slow/${uniqueName(`p3-${i}`)}`);
  for (const path of paths) receiver.script(path, () => ({ status: 204, delayMs: 1_500 }));
  const endpoints = [await endpointOf(p3, paths[0]!), await endpointOf(p3, paths[1]!)];
  // The file's webhooks instance (started here when this test runs alone), now also serving P3.
  webhooks ??= await startWebhooks({
    allowedHosts: [receiver.hostPort],
    publicBaseUrl: api.baseUrl,
    partners: [],
    env: {
      WEBHOOK_ENDPOINT_CONCURRENCY: String(ENDPOINT_CONCURRENCY),
      WEBHOOK_PARTNER_CONCURRENCY: String(PARTNER_CONCURRENCY),
    },
  });
  webhooks.partners.add(p3.partnerId);
  try {
    // 16 deliveries, 8 per endpoint.
    const deliveries: string[] = [];
    for (const ep of endpoints)
      for (let i = 0; i < 8; i++) {
        const ping = await call(api.baseUrl, "POST", `/partner/v1/webhook-endpoints/${ep}/test`, { key: p3.apiKey });
        expect(ping.status).toBe(202);
        deliveries.push(ping.body.deliveryId);
      }
    // Every delivery retried four times a second for 8 s, whatever its state (in flight most of the time).
    const until8s = Date.now() + 8_000;
    let retries = 0;
    while (Date.now() < until8s) {
      const answers = await Promise.all(
        deliveries.map((id) =>
          call(api.baseUrl, "POST", `/partner/v1/webhook-deliveries/${id}/retry`, { key: p3.apiKey }),
        ),
      );
      for (const a of answers) expect(a.status).toBe(202);
      retries += answers.length;
      await Bun.sleep(250);
    }
    const requests = () => paths.flatMap((path) => receiver.requests(path));
    await until("the attempts in flight to end", () => requests().every((r) => r.answeredAt !== undefined), 10_000);
    // The retries kept the receiver busy (deliveries were sent again)...
    expect(retries).toBeGreaterThan(16 * 4);
    expect(requests().length).toBeGreaterThan(16 + 8);
    // ...within the caps: at most 4 at once per endpoint and the partner's 6 in all.
    for (const path of paths) expect(mostAtOnce(receiver.requests(path))).toBeLessThanOrEqual(ENDPOINT_CONCURRENCY);
    expect(mostAtOnce(requests())).toBeLessThanOrEqual(PARTNER_CONCURRENCY);
    // A retry of a delivery in flight waited for that attempt: no webhook-id was ever on the wire twice at once.
    const byId = Map.groupBy(requests(), (r) => r.headers["webhook-id"]!);
    expect(byId.size).toBe(16);
    expect(Math.max(...[...byId.values()].map(mostAtOnce))).toBe(1);
  } finally {
    webhooks.partners.delete(p3.partnerId);
    await removeEndpoints([p3.partnerId]);
  }
}, 60_000);
