// Fencing tokens on webhook deliveries (docs/webhooks.md, "Claims and late writes"), on real servers: two delivery
// workers (the real worker, repository and sender) against the real PostgreSQL and a receiver on loopback that
// answers the first request only after the first worker's claim ran out. The second worker has taken the delivery
// over and delivered it meanwhile; the first worker's late answer changes nothing: not the delivery, not its
// attempt history, not the endpoint (a late 410 does not disable it).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createLogger, createSecretBox } from "@pss/service-kit";
import { call, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import { testUrls, uniqueName } from "../../../test/support/env.ts";
import { loadConfig } from "../src/config.ts";
import { createDeliveryRepository } from "../src/delivery/delivery-repository.ts";
import { createDeliveryWorker, type DeliveryWorker } from "../src/delivery/delivery-worker.ts";
import type { AttemptOutcome } from "../src/delivery/outcome.ts";
import { createSender } from "../src/delivery/sender.ts";
import { startReceiver, type Receiver } from "./support/receiver.ts";
import { testWebhooksEnv, until } from "./support/webhooks-harness.ts";

const LEASE_MS = 400;
const SLOW_MS = 1500;
let api: ApiHarness;
let receiver: Receiver;
let partner: Partner;
const workers: DeliveryWorker[] = [];
const logLines: string[] = [];

beforeAll(async () => {
  api = await startApi({ relay: false });
  receiver = startReceiver();
  partner = await api.createPartner();
});
afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  receiver?.stop();
  if (api) {
    await api.sql`DELETE FROM webhook_endpoints WHERE partner_id = ${partner.partnerId}::uuid`;
    await api.stop();
  }
});

const request = (method: string, path: string, body?: unknown) =>
  call(api.baseUrl, method, `/partner/v1${path}`, { key: partner.apiKey, body });

/**
 * One webhooks instance's delivery worker, its claims shorter than the receiver is slow: as when the worker is
 * stalled past its claim (a pause, a slow database) while the request is in flight.
 */
function startWorker(name: string, outcomes: AttemptOutcome[]): DeliveryWorker {
  const urls = testUrls();
  const config = loadConfig({
    DATABASE_URL: urls.DATABASE_URL,
    KAFKA_BROKERS: urls.KAFKA_BROKERS,
    WEBHOOK_SECRET_KEY: process.env.WEBHOOK_SECRET_KEY,
    PUBLIC_BASE_URL: api.baseUrl,
    ...testWebhooksEnv([receiver.hostPort]),
  });
  const worker = createDeliveryWorker({
    repository: createDeliveryRepository(api.sql, { disableAfterMs: config.disableAfterMs }),
    sender: createSender({ timeoutMs: 10_000, allowedHosts: config.allowedHosts }),
    secrets: createSecretBox(config.secretKey),
    logger: createLogger({ service: name, level: "debug", write: (line) => logLines.push(line) }),
    concurrency: 1,
    pollMs: 50,
    leaseMs: LEASE_MS,
    retryScheduleMs: config.retryScheduleMs,
    partners: () => [partner.partnerId],
    onOutcome: (outcome) => void outcomes.push(outcome),
  });
  worker.start();
  workers.push(worker);
  return worker;
}

async function endpointAndPing(firstReply: number): Promise<{ id: string; path: string; deliveryId: string }> {
  const id = uniqueName("crm");
  const path = `/hooks/${id}`;
  // The first request is answered late (after the first worker's claim ran out), the others at once.
  receiver.script(path, (nth) => (nth === 1 ? { status: firstReply, delayMs: SLOW_MS } : { status: 204 }));
  expect(
    (await request("PUT", `/webhook-endpoints/${id}`, { url: receiver.url(path), events: ["listing.published"] }))
      .status,
  ).toBe(201);
  const ping = await request("POST", `/webhook-endpoints/${id}/test`);
  expect(ping.status).toBe(202);
  return { id, path, deliveryId: ping.body.deliveryId };
}

/** Worker A sends; once its claim has run out worker B takes the delivery over; both finish. */
async function raceTwoWorkers(ep: { path: string }): Promise<AttemptOutcome[]> {
  const outcomes: AttemptOutcome[] = [];
  const a = startWorker("webhooks-a", outcomes);
  await until("the first request", () => receiver.requests(ep.path).length === 1);
  const b = startWorker("webhooks-b", outcomes);
  await until("both attempts to finish", () => outcomes.length === 2, 20_000);
  // Nothing else is due: a third attempt would show here.
  await Bun.sleep(500);
  await Promise.all([a.stop(), b.stop()]);
  return outcomes;
}

async function deliveryOf(endpointId: string, deliveryId: string) {
  const res = await request("GET", `/webhook-deliveries?endpointId=${endpointId}`);
  expect(res.status).toBe(200);
  return res.body.results.find((d: { deliveryId: string }) => d.deliveryId === deliveryId);
}

test("a late 410 from an attempt whose claim was taken over neither disables the endpoint nor touches the delivered delivery", async () => {
  const ep = await endpointAndPing(410);
  const outcomes = await raceTwoWorkers(ep);

  const endpoint = await request("GET", `/webhook-endpoints/${ep.id}`);
  expect(endpoint.status).toBe(200);
  expect(endpoint.body.endpoint).toMatchObject({ enabled: true, disabledReason: null, failingSince: null });
  const d = await deliveryOf(ep.id, ep.deliveryId);
  expect(d).toMatchObject({ status: "delivered", lastStatusCode: 204, lastError: null });
  expect(d.attempts.map((x: { attempt: number; statusCode: number }) => [x.attempt, x.statusCode])).toEqual([[2, 204]]);
  // The receiver got the delivery twice (same webhook-id): that cannot be prevented once a claim ran out mid-request.
  expect(receiver.requests(ep.path).map((r) => r.headers["webhook-id"])).toEqual([ep.deliveryId, ep.deliveryId]);
  expect(outcomes).toEqual(["delivered", "discarded"]);
  expect(logLines.some((l) => l.includes("delivery attempt outlived its claim") && l.includes(ep.deliveryId))).toBe(
    true,
  );
}, 30_000);

test("a late 2xx from an attempt whose claim was taken over is not a second success in the delivery's history", async () => {
  const ep = await endpointAndPing(200);
  const outcomes = await raceTwoWorkers(ep);

  const d = await deliveryOf(ep.id, ep.deliveryId);
  expect(d).toMatchObject({ status: "delivered", attemptCount: 2, lastStatusCode: 204 });
  expect(d.attempts.map((x: { attempt: number; statusCode: number }) => [x.attempt, x.statusCode])).toEqual([[2, 204]]);
  expect(outcomes).toEqual(["delivered", "discarded"]);
}, 30_000);
