// One listing through the whole pipeline, every service a real process (`bun services/<service>/src/main.ts`, as
// deployed) on the real servers: the API (relay off) and a relay-only process, media, indexer and leads. A partner
// PUTs a broker and a listing with two photos (one the image host holds back, one it does not have), a buyer
// sends a lead (the mail server defers it first), and one malformed lead event reaches the leads service. Every
// service's /metrics is scraped before, during and after, and every metric family of docs/operations.md
// ("Metrics") must be present and have moved.
//
// Each process's log lines are kept: `logsOf(service)` returns them (JSON lines) for assertions about the journey
// of `pipelineRequestId`, the X-Request-Id the listing's PUT carries.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import Redis from "ioredis";
import { Kafka, logLevel } from "kafkajs";
import postgres from "postgres";
import { LEAD_SUBMITTED, Topics, topicSpecs } from "@pss/contracts";
import { ensureTopics } from "@pss/service-kit";
import { createPartnerAdmin } from "../../services/api/src/admin/partner-admin.ts";
import {
  freePort,
  moveGroupToEnd,
  spawnService,
  type ServiceProcess,
} from "../../services/api/test/faults/support/fault-harness.ts";
import { sample } from "../../services/api/test/support/harness.ts";
import { startSmtpSink, type SmtpSink } from "../../services/leads/test/support/smtp-sink.ts";
import { startImageServer, type ImageServer } from "../../services/media/test/support/image-server.ts";
import { testUrls, uniqueName } from "../support/env.ts";
import { familiesOf, parsePrometheusText, valueOf, type Sample } from "../support/prometheus-text.ts";

const ROOT = join(import.meta.dir, "..", "..");
type Service = "api" | "marketplace" | "outbox-relay" | "media" | "indexer" | "leads";

const urls = testUrls();
const sql = postgres(urls.DATABASE_URL, { max: 2, onnotice: () => {} });
const kafka = new Kafka({
  clientId: uniqueName("pipeline-test"),
  brokers: urls.KAFKA_BROKERS.split(","),
  logLevel: logLevel.NOTHING,
});
const alias = uniqueName("pipeline-listings");
const groups = {
  media: uniqueName("pipeline-media"),
  indexer: uniqueName("pipeline-indexer"),
  leads: uniqueName("pipeline-leads"),
};
const processes = new Map<Service, ServiceProcess>();
const healthPorts = new Map<Service, number>();
/** The X-Request-Id of the listing's PUT: the ops journey assertions grep every service's log for it. */
export const pipelineRequestId = `pipeline-${crypto.randomUUID()}`;
/** The X-Request-Id of the buyer's lead POST: its own journey (API, relay, both leads workers). */
const leadRequestId = `pipeline-lead-${crypto.randomUUID()}`;
let images: ImageServer;
let smtp: SmtpSink;
let deferMail = true;
let apiBase = "";
/** The buyers' side (inquiries); PUBLIC_BASE_URL names it, as the balancer's address would. */
let marketBase = "";
const setAsideIds: string[] = [];

/** Every log line (JSON text) a service process wrote, stdout and stderr, in order. */
export function logsOf(service: Service): string[] {
  const p = processes.get(service);
  if (!p) throw new Error(`${service} was not started`);
  return p.lines;
}

async function start(service: Service, env: Record<string, string>, script?: string): Promise<void> {
  const port = await freePort();
  const portVar = service === "api" ? "API_HEALTH_PORT" : "HEALTH_PORT";
  const proc = await spawnService(service, { LOG_LEVEL: "info", ...env, [portVar]: String(port) }, port, script);
  processes.set(service, proc);
  healthPorts.set(service, port);
}

async function scrape(service: Service): Promise<{ samples: Sample[]; families: Map<string, string> }> {
  const res = await fetch(`http://127.0.0.1:${healthPorts.get(service)}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  const text = await res.text();
  return { samples: parsePrometheusText(text), families: familiesOf(text) };
}

/** Scrapes `service` until `check` holds (gauges read from a database are cached for up to 15 s). */
async function observe(
  service: Service,
  what: string,
  check: (s: Sample[]) => boolean,
  timeoutMs = 45_000,
): Promise<Sample[]> {
  const deadline = Date.now() + timeoutMs;
  let last: Sample[] = [];
  for (;;) {
    last = (await scrape(service)).samples;
    if (check(last)) return last;
    if (Date.now() > deadline) throw new Error(`${service}: ${what} not seen within ${timeoutMs / 1000} s`);
    await Bun.sleep(500);
  }
}

async function until<T>(
  what: string,
  check: () => Promise<T | null | undefined | false>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await Bun.sleep(250);
  }
}

const v = (samples: Sample[], name: string, labels: Record<string, string> = {}) => valueOf(samples, name, labels) ?? 0;

beforeAll(async () => {
  images = await startImageServer();
  smtp = await startSmtpSink({ reply: () => (deferMail ? { code: 451, text: "Try again later" } : null) });
  // On a fresh Kafka (this may be the first test to use it) the topics must exist before groups are placed on them.
  await ensureTopics(kafka, topicSpecs());
  // Each group starts at the topics' end: it handles what this test publishes (and tolerates foreign events).
  await Promise.all([
    moveGroupToEnd(kafka, groups.media),
    moveGroupToEnd(kafka, groups.indexer),
    moveGroupToEnd(kafka, `${groups.leads}-counter`, [Topics.leadEvents.name]),
    moveGroupToEnd(kafka, `${groups.leads}-mailer`, [Topics.leadEvents.name]),
  ]);
  const apiPort = await freePort();
  const marketPort = await freePort();
  apiBase = `http://127.0.0.1:${apiPort}`;
  marketBase = `http://127.0.0.1:${marketPort}`;
  const mediaDir = join(ROOT, ".data", "media-test");
  await Promise.all([
    start("api", {
      API_PORT: String(apiPort),
      OUTBOX_RELAY_ENABLED: "false",
      PUBLIC_BASE_URL: marketBase,
    }),
    start("marketplace", {
      MARKETPLACE_PORT: String(marketPort),
      OPENSEARCH_INDEX_ALIAS: alias,
      MEDIA_DIR: mediaDir,
      PUBLIC_BASE_URL: marketBase,
    }),
    start("media", {
      MEDIA_CONSUMER_GROUP: groups.media,
      MEDIA_DIR: mediaDir,
      MEDIA_ALLOWED_HOSTS: `127.0.0.1:${images.port}`,
      MEDIA_GC_INTERVAL_MS: "0",
      PUBLIC_BASE_URL: marketBase,
    }),
    // The reconciler would index every overdue listing other test files left in this database: off here
    // (services/indexer/test/reconciler.test.ts covers it); its metric families are still served.
    start("indexer", { OPENSEARCH_INDEX_ALIAS: alias, INDEXER_GROUP_ID: groups.indexer, RECONCILE_INTERVAL_MS: "0" }),
    start("leads", {
      LEADS_GROUP_PREFIX: groups.leads,
      SMTP_HOST: "127.0.0.1",
      SMTP_PORT: String(smtp.port),
      SMTP_FROM: "Leads <leads@pipeline.test>",
      LEAD_DELIVERY_RETRY_SECONDS: "1",
      PUBLIC_BASE_URL: marketBase,
    }),
  ]);
}, 120_000);

afterAll(async () => {
  images?.release("pipeline");
  await Promise.all([...processes.values()].map((p) => p.stop()));
  images?.stop();
  await smtp?.stop();
  // The set-aside row was this test's on purpose; other tests count set-aside rows.
  if (setAsideIds.length) await sql`DELETE FROM outbox WHERE id = ANY(${setAsideIds}::bigint[])`;
  const { Client } = await import("@opensearch-project/opensearch");
  const os = new Client({ node: urls.OPENSEARCH_URL });
  await os.indices.delete({ index: `${alias}-v*` }).catch(() => {});
  await os.close();
  await sql.end({ timeout: 5 });
}, 120_000);

test("a listing, its photos and a lead pass every service, and every metric family is present and moves", async () => {
  const before = {
    api: await scrape("api"),
    marketplace: await scrape("marketplace"),
    media: await scrape("media"),
    indexer: await scrape("indexer"),
    leads: await scrape("leads"),
  };

  // --- the partner writes while no relay runs: the outbox and the index backlog grow --------------------------
  const redis = new Redis(urls.REDIS_URL, { lazyConnect: true });
  const partner = await createPartnerAdmin({ sql, redis }).createPartner({
    name: uniqueName("pipeline-partner"),
    leadTracking: false,
  });
  redis.disconnect();
  const headers = { authorization: `Bearer ${partner.apiKey}`, "content-type": "application/json" };
  const put = (path: string, body: unknown, extra: Record<string, string> = {}) =>
    fetch(apiBase + path, { method: "PUT", headers: { ...headers, ...extra }, body: JSON.stringify(body) });
  const brokerId = uniqueName("broker");
  const brokerEmail = `${uniqueName("broker")}@pipeline.test`;
  expect((await put(`/partner/v1/brokers/${brokerId}`, sample.broker({ forwardingEmail: brokerEmail }))).status).toBe(
    201,
  );
  const listingRes = await put(
    `/partner/v1/listings/${uniqueName("listing")}`,
    sample.listing(brokerId, {
      title: "Pipeline bakery",
      photos: [
        { url: images.url("/hold/pipeline"), sortKey: 1 },
        { url: images.url("/missing.jpg"), sortKey: 2 },
      ],
    }),
    { "x-request-id": pipelineRequestId },
  );
  expect(listingRes.status).toBe(201);
  expect(listingRes.headers.get("x-request-id")).toBe(pipelineRequestId);
  const listingId = ((await listingRes.json()) as { serviceListingId: number }).serviceListingId;
  // Larger than the relay will send (OUTBOX_MAX_MESSAGE_BYTES below): set aside instead of published.
  const big = await put(
    `/partner/v1/listings/${uniqueName("listing")}`,
    sample.listing(brokerId, { photos: [], description: "Long story. ".repeat(1200) }),
  );
  expect(big.status).toBe(201);
  const bigId = ((await big.json()) as { serviceListingId: number }).serviceListingId;

  const apiWaiting = await observe(
    "api",
    "the outbox backlog",
    // Above what was pending before (a shared database may hold other tests' unpublished rows): the gauge is
    // read at most every 5 s, so wait for the reading that includes this test's rows.
    (s) =>
      v(s, "outbox_pending_rows") >= v(before.api.samples, "outbox_pending_rows") + 3 &&
      v(s, "outbox_oldest_pending_age_seconds") > 0,
  );
  await observe(
    "indexer",
    "listings waiting for the index",
    (s) => v(s, "indexer_listings_pending") >= 2 && v(s, "indexer_listings_oldest_pending_age_seconds") > 0,
  );

  // --- the relay starts: events flow ---------------------------------------------------------------------------
  await start("outbox-relay", { OUTBOX_MAX_MESSAGE_BYTES: "8192" }, join("services", "api", "src", "relay-main.ts"));
  const relayed = await observe(
    "outbox-relay",
    "published and set-aside rows",
    (s) =>
      v(s, "outbox_published_total") >= 2 && v(s, "outbox_set_aside_total") >= 1 && v(s, "outbox_relay_active") === 1,
  );
  await observe("api", "the set-aside row", (s) => v(s, "outbox_set_aside_rows") >= 1);
  setAsideIds.push(
    ...(
      await sql<
        { id: string }[]
      >`SELECT id::text AS id FROM outbox WHERE set_aside_at IS NOT NULL AND message_key = ${String(bigId)}`
    ).map((r) => r.id),
  );
  expect(setAsideIds).toHaveLength(1);

  // --- media: one photo held by the image host (the group lags meanwhile), one the host does not have ----------
  const media = groups.media;
  const mediaWhileHeld = await observe(
    "media",
    "lag, a pending photo and a failed one",
    (s) =>
      v(s, "kafka_consumer_lag_messages", { group: media }) >= 1 &&
      v(s, "media_images", { kind: "photo", state: "pending" }) >= 1 &&
      v(s, "media_failed_images", { kind: "photo", reason: "HTTP 404 from image host" }) >= 1,
  );
  images.release("pipeline");
  await until(
    "the held photo to be ready",
    async () =>
      (await sql`SELECT 1 FROM listing_photos WHERE listing_id = ${listingId} AND state = 'ready'`).length === 1,
  );
  await until(
    "the listing to be indexed",
    async () => (await sql`SELECT index_state FROM listings WHERE id = ${listingId}`)[0]?.index_state === "indexed",
  );

  // --- a lead: the mail server defers it, then accepts it ------------------------------------------------------
  const leadRes = await fetch(`${marketBase}/v1/listings/${listingId}/leads`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-request-id": leadRequestId },
    body: JSON.stringify({ name: "Pat Buyer", email: "pat@example.com", message: "Is the oven included?" }),
  });
  expect(leadRes.status).toBe(202);
  const leadsDeferred = await observe(
    "leads",
    "a deferred lead",
    (s) =>
      v(s, "leads_deliveries", { state: "pending" }) >= 1 &&
      v(s, "leads_delivery_attempts_total", { outcome: "retry" }) >= 1,
  );
  deferMail = false;
  await until("the lead's e-mail", async () => smtp.received.some((m) => m.envelopeTo.includes(brokerEmail)), 60_000);

  // --- a malformed lead event: the counter group dead-letters it ----------------------------------------------
  const producer = kafka.producer();
  await producer.connect();
  const poisonId = crypto.randomUUID();
  await producer.send({
    topic: Topics.leadEvents.name,
    messages: [
      {
        key: poisonId,
        value: JSON.stringify({
          eventId: crypto.randomUUID(),
          type: LEAD_SUBMITTED,
          aggregateType: "lead",
          aggregateId: poisonId,
          version: 1,
          partnerId: partner.partnerId,
          occurredAt: new Date().toISOString(),
          payload: {},
        }),
      },
    ],
  });
  await producer.disconnect();
  const counter = `${groups.leads}-counter`;
  const dlq = Topics.leadsDeadLetter.name;
  await observe(
    "leads",
    "the dead letter",
    (s) =>
      v(s, "kafka_consumer_messages_total", { group: counter, outcome: "dead_lettered" }) >= 1 &&
      v(s, "kafka_dead_letter_messages", { topic: dlq }) >
        v(before.leads.samples, "kafka_dead_letter_messages", { topic: dlq }),
  );
  await observe("leads", "the sent lead", (s) => v(s, "leads_delivery_attempts_total", { outcome: "sent" }) >= 1);

  // --- after: every family present, and moved ------------------------------------------------------------------
  const after = {
    api: await scrape("api"),
    marketplace: await scrape("marketplace"),
    relay: await scrape("outbox-relay"),
    media: await scrape("media"),
    indexer: await scrape("indexer"),
    leads: await scrape("leads"),
  };
  const moved = (b: Sample[], a: Sample[], name: string, labels: Record<string, string> = {}) =>
    v(a, name, labels) - v(b, name, labels);
  const missing: string[] = [];
  const expectFamilies = (service: string, families: Map<string, string>, names: string[]) => {
    for (const name of names) if (!families.has(name)) missing.push(`${service}: ${name}`);
  };
  const PROCESS = [
    "process_cpu_seconds_total",
    "process_resident_memory_bytes",
    "nodejs_eventloop_lag_p99_seconds",
    "nodejs_eventloop_lag_seconds",
    "metrics_source_up",
  ];
  const CONSUMER = [
    "kafka_consumer_messages_total",
    "kafka_consumer_handler_duration_seconds",
    "kafka_consumer_lag_messages",
    "kafka_dead_letter_messages",
  ];
  expectFamilies("api", after.api.families, [
    ...PROCESS,
    "http_requests_total",
    "http_request_duration_seconds",
    "outbox_pending_rows",
    "outbox_oldest_pending_age_seconds",
    "outbox_set_aside_rows",
  ]);
  expectFamilies("outbox-relay", after.relay.families, [
    ...PROCESS.filter((f) => f !== "metrics_source_up"),
    "outbox_published_total",
    "outbox_set_aside_total",
    "outbox_relay_active",
  ]);
  expectFamilies("media", after.media.families, [
    ...PROCESS,
    ...CONSUMER,
    "media_jobs_total",
    "media_job_failures_total",
    "media_job_duration_seconds",
    "media_images",
    "media_failed_images",
  ]);
  expectFamilies("indexer", after.indexer.families, [
    ...PROCESS,
    ...CONSUMER,
    "indexer_listings_pending",
    "indexer_listings_oldest_pending_age_seconds",
    "indexer_reconciler_repairs_total",
    "indexer_reconciler_runs_total",
    "indexer_reconciler_active",
  ]);
  expectFamilies("leads", after.leads.families, [
    ...PROCESS,
    ...CONSUMER,
    "leads_delivery_attempts_total",
    "leads_deliveries",
  ]);
  expect(missing).toEqual([]);

  // HTTP: the PUT counted under its route template, with its latency.
  const listingRoute = { method: "PUT", route: "/partner/v1/listings/:externalListingId", status: "201" };
  expect(moved(before.api.samples, after.api.samples, "http_requests_total", listingRoute)).toBe(2);
  expect(moved(before.api.samples, after.api.samples, "http_request_duration_seconds_count", listingRoute)).toBe(2);
  expect(
    moved(before.marketplace.samples, after.marketplace.samples, "http_requests_total", {
      method: "POST",
      route: "/v1/listings/:serviceListingId/leads",
      status: "202",
    }),
  ).toBe(1);
  // Outbox: backlog and age rose while no relay ran; the relay published and set aside; the API saw the set-aside row.
  expect(v(apiWaiting, "outbox_pending_rows")).toBeGreaterThan(v(before.api.samples, "outbox_pending_rows"));
  expect(v(relayed, "outbox_published_total")).toBeGreaterThanOrEqual(2);
  expect(v(after.relay.samples, "outbox_set_aside_total")).toBeGreaterThanOrEqual(1);
  // Consumers: every group handled messages, timed its handler, reports lag per partition.
  const consumerGroups: [Service, string, string][] = [
    ["media", groups.media, Topics.listingEvents.name],
    ["indexer", groups.indexer, Topics.listingEvents.name],
    ["leads", `${groups.leads}-counter`, Topics.leadEvents.name],
    ["leads", `${groups.leads}-mailer`, Topics.leadEvents.name],
  ];
  for (const [service, group, topic] of consumerGroups) {
    const b = before[service as "media" | "indexer" | "leads"].samples;
    const a = after[service as "media" | "indexer" | "leads"].samples;
    expect([group, moved(b, a, "kafka_consumer_messages_total", { group, topic, outcome: "handled" }) >= 1]).toEqual([
      group,
      true,
    ]);
    expect([group, moved(b, a, "kafka_consumer_handler_duration_seconds_count", { group, topic }) >= 1]).toEqual([
      group,
      true,
    ]);
    const partitions = a
      .filter((s) => s.name === "kafka_consumer_lag_messages" && s.labels.group === group && s.labels.topic === topic)
      .map((s) => Number(s.labels.partition));
    expect([group, partitions.length]).toEqual([
      group,
      topic === Topics.leadEvents.name ? Topics.leadEvents.partitions : Topics.listingEvents.partitions,
    ]);
  }
  expect(v(mediaWhileHeld, "kafka_consumer_lag_messages", { group: groups.media })).toBeGreaterThanOrEqual(1);
  // Media: one photo ready, one failed with its reason.
  expect(
    moved(before.media.samples, after.media.samples, "media_jobs_total", { kind: "photo", outcome: "ready" }),
  ).toBeGreaterThanOrEqual(1);
  expect(
    moved(before.media.samples, after.media.samples, "media_jobs_total", { kind: "photo", outcome: "failed" }),
  ).toBeGreaterThanOrEqual(1);
  expect(
    moved(before.media.samples, after.media.samples, "media_job_failures_total", {
      kind: "photo",
      reason: "HTTP 404 from image host",
    }),
  ).toBeGreaterThanOrEqual(1);
  expect(
    moved(before.media.samples, after.media.samples, "media_job_duration_seconds_count", { kind: "photo" }),
  ).toBeGreaterThanOrEqual(2);
  // Leads: deferred, then sent.
  expect(v(leadsDeferred, "leads_deliveries", { state: "pending" })).toBeGreaterThan(
    v(before.leads.samples, "leads_deliveries", { state: "pending" }) - 1,
  );
  expect(
    moved(before.leads.samples, after.leads.samples, "leads_delivery_attempts_total", { outcome: "sent" }),
  ).toBeGreaterThanOrEqual(1);
  // Process metrics move in every process.
  for (const service of ["api", "media", "indexer", "leads"] as const) {
    expect([service, moved(before[service].samples, after[service].samples, "process_cpu_seconds_total") > 0]).toEqual([
      service,
      true,
    ]);
  }
  // The reconciler (off here) reports zero repairs for every reason.
  expect(v(after.indexer.samples, "indexer_reconciler_repairs_total")).toBe(0);

  // The journey: `grep <requestId>` over every service's log finds the PUT in each service it passed (the API
  // took it, the relay published it, media processed its photos, the indexer indexed it), and the lead's in the
  // marketplace (which took it), the relay and the leads service; with the request's traceparent on the consumers'
  // lines too.
  const linesWith = (service: Service, requestId: string) =>
    logsOf(service)
      .filter((l) => l.includes(requestId))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  for (const service of ["api", "outbox-relay", "media", "indexer"] as const)
    expect([service, linesWith(service, pipelineRequestId).length > 0]).toEqual([service, true]);
  for (const service of ["marketplace", "outbox-relay", "leads"] as const)
    expect([service, linesWith(service, leadRequestId).length > 0]).toEqual([service, true]);
  const traceparent = listingRes.headers.get("traceparent");
  expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
  const traceId = traceparent!.split("-")[1]!;
  for (const service of ["media", "indexer"] as const) {
    const handled = linesWith(service, pipelineRequestId).filter((l) => l.msg === "event handled");
    expect([service, handled.length > 0 && handled.every((l) => String(l.traceparent).includes(traceId))]).toEqual([
      service,
      true,
    ]);
  }
  // Nothing of the buyer's reaches a log line.
  for (const service of processes.keys())
    expect([
      service,
      logsOf(service).some((l) => l.includes("pat@example.com") || l.includes("Is the oven included?")),
    ]).toEqual([service, false]);

  // Every process ran without crashing.
  for (const [service, p] of processes) expect([service, p.exitCode()]).toEqual([service, null]);
}, 300_000);
