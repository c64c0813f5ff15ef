// The webhooks service as deployed (`bun services/webhooks/src/main.ts`, a real process) SIGKILLed while
// deliveries are in flight: the attempts it never recorded are taken up by the next process once their claim
// expires, so every delivery still arrives, and a request that arrives twice carries the same webhook-id and
// body. Then a graceful stop (SIGTERM) lets the attempt in flight finish and be recorded. The receiver is real
// (loopback, allowed by the test-only WEBHOOK_ALLOWED_HOSTS); every request is verified with standardwebhooks.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Kafka, logLevel } from "kafkajs";
import { Topics } from "@pss/contracts";
import { freePort, spawnService, type ServiceProcess } from "../../api/test/faults/support/fault-harness.ts";
import { call, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import { startGroupAtEnd } from "../../../test/support/consumer-groups.ts";
import { testUrls, uniqueName } from "../../../test/support/env.ts";
import { parsePrometheusText, valueOf } from "../../../test/support/prometheus-text.ts";
import { startReceiver, verified, type Receiver } from "./support/receiver.ts";
import { testWebhooksEnv, until } from "./support/webhooks-harness.ts";

const DELIVERIES = 8;
const TIMEOUT_MS = 3000;
let api: ApiHarness;
let receiver: Receiver;
let partner: Partner;
const groupId = uniqueName("webhooks-kill-test");
const running: ServiceProcess[] = [];

beforeAll(async () => {
  api = await startApi({ relay: false });
  receiver = startReceiver();
  partner = await api.createPartner();
  const kafka = new Kafka({
    clientId: groupId,
    brokers: testUrls().KAFKA_BROKERS.split(","),
    logLevel: logLevel.NOTHING,
  });
  await startGroupAtEnd(kafka, groupId, [Topics.partnerEvents.name]);
  await startGroupAtEnd(kafka, `${groupId}-reports`, [
    Topics.listingEvents.name,
    Topics.brokerEvents.name,
    Topics.partnerEvents.name,
  ]);
});
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()));
  receiver?.stop();
  if (api) {
    await api.sql`DELETE FROM webhook_endpoints WHERE partner_id = ${partner.partnerId}::uuid`;
    await api.stop();
  }
}, 60_000);

async function startWorker(): Promise<ServiceProcess> {
  const port = await freePort();
  const proc = await spawnService(
    "webhooks",
    {
      ...testWebhooksEnv([receiver.hostPort], {
        WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
        WEBHOOK_CLAIM_MARGIN_MS: "500",
        WEBHOOK_CONCURRENCY: "4",
      }),
      WEBHOOKS_CONSUMER_GROUP: groupId,
      REPORT_TRACKER_CONSUMER_GROUP: `${groupId}-reports`,
      // The killed member leaves the group after this (the broker's minimum) instead of 30 s: the next worker's
      // consumer joins, and stops, without waiting for it.
      KAFKA_SESSION_TIMEOUT_MS: "6000",
      KAFKA_REBALANCE_TIMEOUT_MS: "6000",
      PUBLIC_BASE_URL: api.baseUrl,
      HEALTH_PORT: String(port),
    },
    port,
  );
  running.push(proc);
  return proc;
}

const request = (method: string, path: string, body?: unknown) =>
  call(api.baseUrl, method, `/partner/v1${path}`, { key: partner.apiKey, body });

async function deliveries(endpointId: string): Promise<{ deliveryId: string; status: string; attemptCount: number }[]> {
  const res = await request("GET", `/webhook-deliveries?endpointId=${endpointId}&limit=500`);
  expect(res.status).toBe(200);
  return res.body.results;
}

test("SIGKILL mid-delivery: every delivery still arrives, repeats only with the same webhook-id; SIGTERM finishes the attempt in flight", async () => {
  const endpointId = uniqueName("crm");
  const path = `/hooks/${endpointId}`;
  const created = await request("PUT", `/webhook-endpoints/${endpointId}`, {
    url: receiver.url(path),
    events: ["listing.published"],
  });
  expect(created.status).toBe(201);
  const secret: string = created.body.secret;
  // The first requests hang past the sender's timeout: they are in flight when the worker dies.
  receiver.script(path, (nth) => (nth <= 4 ? { status: 204, delayMs: TIMEOUT_MS + 2000 } : { status: 204 }));

  const first = await startWorker();
  const ids: string[] = [];
  for (let i = 0; i < DELIVERIES; i++)
    ids.push((await request("POST", `/webhook-endpoints/${endpointId}/test`)).body.deliveryId);
  await until("deliveries in flight at the receiver", () => receiver.holding() >= 1);
  expect(await first.kill("SIGKILL")).toBe(137);
  const beforeRestart = receiver.requests(path).length;

  const second = await startWorker();
  await until(
    `all ${DELIVERIES} deliveries delivered`,
    async () => (await deliveries(endpointId)).filter((d) => d.status === "delivered").length === DELIVERIES,
    60_000,
  );
  const requests = receiver.requests(path);
  expect(requests.length).toBeGreaterThan(beforeRestart);
  // Every delivery arrived; nothing arrived that is not one of them.
  expect(new Set(requests.map((r) => r.headers["webhook-id"]))).toEqual(new Set(ids));
  // A repeat carries the same webhook-id and exactly the same body (a receiver drops it by the id).
  const bodyOf = new Map<string, string>();
  for (const r of requests) {
    const id = r.headers["webhook-id"]!;
    if (bodyOf.has(id)) expect(r.body).toBe(bodyOf.get(id)!);
    bodyOf.set(id, r.body);
    expect(verified(r, secret).type).toBe("ping");
  }
  // The attempts the killed worker never finished were made again: some webhook-ids arrived twice.
  expect(requests.length).toBeGreaterThan(ids.length);

  // The second worker's /metrics: deliveries by outcome, endpoints by state.
  const samples = parsePrometheusText(await (await fetch(`http://127.0.0.1:${second.port}/metrics`)).text());
  expect(valueOf(samples, "webhook_delivery_attempts_total", { outcome: "delivered" })).toBeGreaterThanOrEqual(1);
  expect(valueOf(samples, "webhook_endpoints", { state: "active" })).toBeGreaterThanOrEqual(1);
  expect(valueOf(samples, "kafka_consumer_lag_messages") ?? 0).toBeGreaterThanOrEqual(0);

  // A graceful stop waits for the attempt in flight and records it: delivered once, nothing left to resend.
  receiver.script(path, () => ({ status: 204, delayMs: 1000 }));
  const lastId: string = (await request("POST", `/webhook-endpoints/${endpointId}/test`)).body.deliveryId;
  await until(
    "the last delivery in flight",
    () => receiver.holding() >= 1 && receiver.requests(path).some((r) => r.headers["webhook-id"] === lastId),
  );
  expect(await second.kill("SIGTERM")).toBe(0);
  // Every shutdown step finished in time, nothing escaped (kafkajs may log its own connection noise while leaving).
  expect(
    second.lines.filter(
      (l) =>
        l.includes("shutdown step failed") ||
        l.includes("uncaught exception") ||
        l.includes("unhandled promise rejection"),
    ),
  ).toEqual([]);
  const last = (await deliveries(endpointId)).find((d) => d.deliveryId === lastId)!;
  expect(last).toMatchObject({ status: "delivered", attemptCount: 1 });
  expect(receiver.requests(path).filter((r) => r.headers["webhook-id"] === lastId)).toHaveLength(1);
}, 150_000);
