// A failure of ours is never the receiver's: with our PostgreSQL unreachable right after the sends (longer than a
// claim lasts), the worker waits to record them, and every delivery arrives exactly once with one attempt; with a
// signing secret this worker cannot read (our configuration), deliveries wait without spending attempts or
// marking the endpoint failing, and go out once a correctly configured worker runs. PostgreSQL is cut through a
// gated proxy in front of the shared server (never stopped).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { call, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import {
  createGatedProxy,
  endpointOfUrl,
  viaProxy,
  type GatedProxy,
} from "../../api/test/faults/support/gated-proxy.ts";
import { testUrls, uniqueName } from "../../../test/support/env.ts";
import { startReceiver, verified, type Receiver } from "./support/receiver.ts";
import { startWebhooks, until, type WebhooksHarness } from "./support/webhooks-harness.ts";

let api: ApiHarness;
let receiver: Receiver;
let partner: Partner;
let pgProxy: GatedProxy;
const running: WebhooksHarness[] = [];
const waits: string[] = [];

beforeAll(async () => {
  api = await startApi({ relay: false });
  receiver = startReceiver();
  partner = await api.createPartner();
  pgProxy = await createGatedProxy(endpointOfUrl(testUrls().DATABASE_URL));
  await pgProxy.open();
});
afterAll(async () => {
  for (const w of running) await w.stop();
  await pgProxy?.close();
  receiver?.stop();
  if (api) {
    await api.sql`DELETE FROM webhook_endpoints WHERE partner_id = ${partner.partnerId}::uuid`;
    await api.stop();
  }
});

async function startWorker(env: Record<string, string> = {}): Promise<WebhooksHarness> {
  const w = await startWebhooks({
    allowedHosts: [receiver.hostPort],
    publicBaseUrl: api.baseUrl,
    partners: [partner.partnerId],
    databaseUrl: viaProxy(testUrls().DATABASE_URL, pgProxy),
    // A claim lasts 2 s + 1 s here: the outage below outlasts it.
    env: { WEBHOOK_TIMEOUT_MS: "2000", WEBHOOK_CLAIM_MARGIN_MS: "1000", ...env },
    outageBackoff: { baseMs: 100, maxMs: 500 },
    outageMetrics: { waited: (d) => void waits.push(d), waiting: () => {} },
  });
  running.push(w);
  return w;
}

const request = (method: string, path: string, body?: unknown) =>
  call(api.baseUrl, method, `/partner/v1${path}`, { key: partner.apiKey, body });

async function newEndpoint(): Promise<{ id: string; path: string; secret: string }> {
  const id = uniqueName("crm");
  const path = `/hooks/${id}`;
  const res = await request("PUT", `/webhook-endpoints/${id}`, {
    url: receiver.url(path),
    events: ["listing.published"],
  });
  expect(res.status).toBe(201);
  return { id, path, secret: res.body.secret };
}

async function ping(endpointId: string): Promise<string> {
  const res = await request("POST", `/webhook-endpoints/${endpointId}/test`);
  expect(res.status).toBe(202);
  return res.body.deliveryId;
}

const rows = (ids: string[]) =>
  api.sql<{ id: string; status: string; attempt_count: number; last_error: string | null }[]>`
    SELECT id::text, status, attempt_count, last_error FROM webhook_deliveries WHERE id = ANY(${ids}::uuid[]) ORDER BY id`;
const attemptRows = async (ids: string[]) =>
  (await api.sql`SELECT count(*)::int AS n FROM webhook_attempts WHERE delivery_id = ANY(${ids}::uuid[])`)[0]!
    .n as number;

test("our PostgreSQL unreachable after the sends, for longer than a claim: each delivery is recorded once, arrives once, one attempt", async () => {
  const worker = await startWorker();
  const ep = await newEndpoint();
  // The receiver answers after 1.5 s: meanwhile the worker's database goes away.
  receiver.script(ep.path, () => ({ status: 204, delayMs: 1500 }));
  const ids = [await ping(ep.id), await ping(ep.id), await ping(ep.id)];
  await until("the sends to be in flight", () => receiver.holding() === ids.length, 10_000);
  await pgProxy.close();
  await until(
    "the outcomes to wait for PostgreSQL",
    () => waits.filter((d) => d === "postgres").length >= ids.length,
    10_000,
  );
  // Longer than a claim (3 s): before, the claims ran out and the deliveries were sent again with an attempt spent.
  await Bun.sleep(5_000);
  await pgProxy.open();

  const done = await until(
    "every delivery recorded as delivered",
    async () => {
      const r = await rows(ids);
      return r.length === ids.length && r.every((d) => d.status === "delivered") ? r : null;
    },
    15_000,
  );
  expect(done.map((d) => d.attempt_count)).toEqual([1, 1, 1]);
  expect(await attemptRows(ids)).toBe(ids.length);
  await Bun.sleep(1_000);
  const got = receiver.requests(ep.path);
  expect(got.map((r) => r.headers["webhook-id"]).sort()).toEqual([...ids].sort());
  for (const r of got) verified(r, ep.secret);
  expect(worker.service.outcomes()).toMatchObject({ delivered: 3, retry_scheduled: 0, failed: 0, discarded: 0 });
  await worker.stop();
  running.splice(running.indexOf(worker), 1);
}, 60_000);

test("a signing secret we cannot read (our configuration) spends no attempt and does not mark the endpoint failing; the delivery goes out once fixed", async () => {
  const ep = await newEndpoint();
  receiver.script(ep.path, () => ({ status: 204 }));
  const misconfigured = await startWorker({ WEBHOOK_SECRET_KEY: randomBytes(32).toString("base64") });
  const id = await ping(ep.id);
  // More postponements than the schedule (0, 300 ms, 600 ms) has attempts, and still nothing spent.
  await until(
    "the delivery to be postponed again and again",
    () => misconfigured.service.outcomes().postponed >= 5,
    15_000,
  );
  await misconfigured.stop();
  running.splice(running.indexOf(misconfigured), 1);
  const [waiting] = await rows([id]);
  expect(waiting).toMatchObject({ status: "pending", attempt_count: 0 });
  expect(waiting!.last_error).toContain("configuration problem on our side");
  expect(await attemptRows([id])).toBe(0);
  expect(receiver.requests(ep.path)).toHaveLength(0);
  const [endpoint] =
    await api.sql`SELECT enabled, failing_since FROM webhook_endpoints WHERE partner_id = ${partner.partnerId}::uuid AND external_id = ${ep.id}`;
  expect(endpoint).toMatchObject({ enabled: true, failing_since: null });

  // A worker with the right key (the API's) sends it; the postponement waits at most the back-off's cap.
  const fixed = await startWorker();
  await until(
    "the delivery delivered",
    async () => ((await rows([id]))[0]!.status === "delivered" ? true : null),
    10_000,
  );
  expect((await rows([id]))[0]!.attempt_count).toBe(1);
  expect(receiver.requests(ep.path)).toHaveLength(1);
  verified(receiver.requests(ep.path)[0]!, ep.secret);
  expect(fixed.service.outcomes().delivered).toBe(1);
}, 60_000);
