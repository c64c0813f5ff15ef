// Fencing tokens on webhook deliveries (docs/webhooks.md, "Claims and late writes"), on real servers: delivery
// workers (the real worker, repository and sender) against the real PostgreSQL and a receiver on loopback that
// answers the first request late. Either the first worker's claim runs out and a second worker takes the delivery
// over, its attempt failing (500) so the delivery is still pending when the late answer lands; or the partner
// asks for a retry while the first attempt is in flight. Either way the late answer changes nothing: not the
// delivery, not its attempt history, not the endpoint (a late 410 does not disable it). Only the claim token
// stops it: the delivery is pending, so a check of the status alone would let it through.
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

/** After a failed attempt, the next one only well after the late answer landed. */
const RETRY_SCHEDULE_MS = [0, 3000, 3000];

/**
 * One webhooks instance's delivery worker. By default its claims are shorter than the receiver is slow: as when the
 * worker is stalled past its claim (a pause, a slow database) while the request is in flight.
 */
function startWorker(name: string, outcomes: AttemptOutcome[], leaseMs = LEASE_MS): DeliveryWorker {
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
    leaseMs,
    retryScheduleMs: RETRY_SCHEDULE_MS,
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
  // The first request is answered late (after the first worker's claim ran out), the second fails at once (the
  // delivery stays pending, its next attempt seconds away), the third succeeds.
  receiver.script(path, (nth) =>
    nth === 1 ? { status: firstReply, delayMs: SLOW_MS } : nth === 2 ? { status: 500 } : { status: 204 },
  );
  expect(
    (await request("PUT", `/webhook-endpoints/${id}`, { url: receiver.url(path), events: ["listing.published"] }))
      .status,
  ).toBe(201);
  const ping = await request("POST", `/webhook-endpoints/${id}/test`);
  expect(ping.status).toBe(202);
  return { id, path, deliveryId: ping.body.deliveryId };
}

/**
 * Worker A sends; once its claim has run out worker B takes the delivery over and gets a 500 (still pending); A's
 * late answer lands then; the next attempt delivers. Returns the delivery as it was right after A's answer landed.
 */
async function raceTwoWorkers(ep: { id: string; path: string; deliveryId: string }) {
  const outcomes: AttemptOutcome[] = [];
  const a = startWorker("webhooks-a", outcomes);
  await until("the first request", () => receiver.requests(ep.path).length === 1);
  const b = startWorker("webhooks-b", outcomes);
  await until("B's attempt and A's late answer", () => outcomes.length === 2, 20_000);
  const afterLateAnswer = await deliveryOf(ep.id, ep.deliveryId);
  await until("the third attempt", () => outcomes.length === 3, 20_000);
  // Nothing else is due: a fourth attempt would show here.
  await Bun.sleep(500);
  await Promise.all([a.stop(), b.stop()]);
  return { outcomes, afterLateAnswer };
}

async function deliveryOf(endpointId: string, deliveryId: string) {
  const res = await request("GET", `/webhook-deliveries?endpointId=${endpointId}`);
  expect(res.status).toBe(200);
  return res.body.results.find((d: { deliveryId: string }) => d.deliveryId === deliveryId);
}

test("a late 410 from an attempt whose claim was taken over neither disables the endpoint nor fails the pending delivery", async () => {
  const ep = await endpointAndPing(410);
  const { outcomes, afterLateAnswer } = await raceTwoWorkers(ep);

  // When A's 410 landed, the delivery was pending (B's 500): only the token kept A's answer out.
  expect(afterLateAnswer).toMatchObject({ status: "pending", lastStatusCode: 500 });
  expect(
    afterLateAnswer.attempts.map((x: { attempt: number; statusCode: number }) => [x.attempt, x.statusCode]),
  ).toEqual([[2, 500]]);
  const endpoint = await request("GET", `/webhook-endpoints/${ep.id}`);
  expect(endpoint.status).toBe(200);
  expect(endpoint.body.endpoint).toMatchObject({ enabled: true, disabledReason: null });
  const d = await deliveryOf(ep.id, ep.deliveryId);
  expect(d).toMatchObject({ status: "delivered", lastStatusCode: 204, lastError: null });
  expect(d.attempts.map((x: { attempt: number; statusCode: number }) => [x.attempt, x.statusCode])).toEqual([
    [2, 500],
    [3, 204],
  ]);
  // The receiver got the delivery three times (same webhook-id): the first twice cannot be prevented once a claim
  // ran out mid-request.
  expect(receiver.requests(ep.path).map((r) => r.headers["webhook-id"])).toEqual([
    ep.deliveryId,
    ep.deliveryId,
    ep.deliveryId,
  ]);
  expect(outcomes).toEqual(["retry_scheduled", "discarded", "delivered"]);
  expect(logLines.some((l) => l.includes("delivery attempt outlived its claim") && l.includes(ep.deliveryId))).toBe(
    true,
  );
}, 30_000);

test("a late 2xx from an attempt whose claim was taken over does not deliver the pending delivery", async () => {
  const ep = await endpointAndPing(200);
  const { outcomes, afterLateAnswer } = await raceTwoWorkers(ep);

  expect(afterLateAnswer).toMatchObject({ status: "pending", deliveredAt: null, lastStatusCode: 500 });
  const d = await deliveryOf(ep.id, ep.deliveryId);
  expect(d).toMatchObject({ status: "delivered", attemptCount: 3, lastStatusCode: 204 });
  expect(d.attempts.map((x: { attempt: number; statusCode: number }) => [x.attempt, x.statusCode])).toEqual([
    [2, 500],
    [3, 204],
  ]);
  expect(outcomes).toEqual(["retry_scheduled", "discarded", "delivered"]);
}, 30_000);

test("a retry asked for while an attempt is in flight: the attempt's late 410 neither fails the delivery nor disables the endpoint", async () => {
  const id = uniqueName("crm");
  const path = `/hooks/${id}`;
  receiver.script(path, (nth) => (nth === 1 ? { status: 410, delayMs: SLOW_MS } : { status: 204 }));
  expect(
    (await request("PUT", `/webhook-endpoints/${id}`, { url: receiver.url(path), events: ["listing.published"] }))
      .status,
  ).toBe(201);
  const deliveryId = (await request("POST", `/webhook-endpoints/${id}/test`)).body.deliveryId as string;
  const outcomes: AttemptOutcome[] = [];
  // Its claim outlasts the slow answer: nothing but the partner's retry takes the delivery from this attempt.
  const worker = startWorker("webhooks-retry", outcomes, 10_000);
  await until("the first request", () => receiver.requests(path).length === 1);
  expect(await request("POST", `/webhook-deliveries/${deliveryId}/retry`)).toMatchObject({
    status: 202,
    body: { deliveryId },
  });
  // The late answer is discarded; the retried attempt may follow it within milliseconds.
  await until("the late answer", () => outcomes.length >= 1, 10_000);
  expect(outcomes[0]).toBe("discarded");
  expect((await request("GET", `/webhook-endpoints/${id}`)).body.endpoint).toMatchObject({ enabled: true });
  // Queued, as the retry answered: the worker sends it again and it is delivered.
  await until("the retried attempt", () => outcomes.length >= 2, 10_000);
  await worker.stop();
  expect(outcomes).toEqual(["discarded", "delivered"]);
  const d = await deliveryOf(id, deliveryId);
  expect(d).toMatchObject({ status: "delivered", lastStatusCode: 204 });
  expect(d.attempts.map((x: { attempt: number; statusCode: number }) => [x.attempt, x.statusCode])).toEqual([[2, 204]]);
}, 30_000);
