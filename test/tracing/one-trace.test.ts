// One record's journey as one trace in Zipkin (docs/operations.md, "Following one request"), every service a real
// process (`bun services/<service>/src/main.ts`, as deployed) on the real servers, exporting its spans to a Zipkin of
// this test's own (test/support/private-zipkin.ts), read back through Zipkin's API:
// - a PUT with two photos: the API's request, its transaction and write, the relay's publish, media's handling with
//   a span per photo (download, resize, store), the indexer's, and the webhooks delivery of the fact media wrote,
//   each under its parent, within 30 s;
// - a buyer's lead: its trace reaches the e-mail send;
// - an API at sampling ratio 0: no span anywhere, nothing exported;
// - the store down for 20 s: every request answered, spans dropped and counted, export resumes by itself.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import Redis from "ioredis";
import { Kafka, logLevel } from "kafkajs";
import postgres from "postgres";
import { Topics, topicSpecs } from "@pss/contracts";
import { ensureTopics, traceIdOf } from "@pss/service-kit";
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
import { startReceiver, type Receiver } from "../../services/webhooks/test/support/receiver.ts";
import { testUrls, uniqueName } from "../support/env.ts";
import { parsePrometheusText, valueOf } from "../support/prometheus-text.ts";
import { startPrivateZipkin, type PrivateZipkin, type ZipkinSpan } from "../support/private-zipkin.ts";
import { launchChromium } from "../../services/api/test/support/browser.ts";
import { mkdirSync } from "node:fs";

const ROOT = join(import.meta.dir, "..", "..");
// The trace view's screenshot in docs/operations.md is rewritten only on request (UPDATE_SCREENSHOTS=1).
const SCREENSHOTS = join(ROOT, process.env.UPDATE_SCREENSHOTS ? "docs/screenshots" : ".data/screenshots");
const urls = testUrls();
const sql = postgres(urls.DATABASE_URL, { max: 2, onnotice: () => {} });
const kafka = new Kafka({
  clientId: uniqueName("trace-test"),
  brokers: urls.KAFKA_BROKERS.split(","),
  logLevel: logLevel.NOTHING,
});
const alias = uniqueName("trace-listings");
const groups = {
  media: uniqueName("trace-media"),
  indexer: uniqueName("trace-indexer"),
  leads: uniqueName("trace-leads"),
  webhooks: uniqueName("trace-webhooks"),
};
const processes: ServiceProcess[] = [];
let zipkin: PrivateZipkin;
let images: ImageServer;
let smtp: SmtpSink;
let receiver: Receiver;
let apiBase = "";
let apiHealth = "";
let partner: { apiKey: string; partnerId: string };
const brokerId = uniqueName("broker");

async function start(service: string, env: Record<string, string>): Promise<{ healthPort: number }> {
  const port = await freePort();
  const portVar = service === "api" ? "API_HEALTH_PORT" : "HEALTH_PORT";
  const tracing = { TRACING_ZIPKIN_URL: zipkin.spansUrl, TRACING_SAMPLE_RATIO: "1" };
  processes.push(await spawnService(service, { LOG_LEVEL: "info", ...tracing, ...env, [portVar]: String(port) }, port));
  return { healthPort: port };
}

const headers = () => ({ authorization: `Bearer ${partner.apiKey}`, "content-type": "application/json" });
const put = (base: string, path: string, body: unknown) =>
  fetch(base + path, { method: "PUT", headers: headers(), body: JSON.stringify(body) });

async function metric(healthUrl: string, name: string, labels: Record<string, string> = {}): Promise<number | null> {
  const text = await (await fetch(`${healthUrl}/metrics`)).text();
  return valueOf(parsePrometheusText(text), name, labels) ?? null;
}

/** Polls Zipkin until the trace satisfies `complete` (returns its spans) or the deadline passes (returns the last seen). */
async function traceUntil(
  traceId: string,
  complete: (spans: ZipkinSpan[]) => boolean,
  deadline: number,
): Promise<ZipkinSpan[]> {
  let spans: ZipkinSpan[] = [];
  for (;;) {
    spans = await zipkin.trace(traceId).catch(() => spans);
    if (complete(spans) || Date.now() > deadline) return spans;
    await Bun.sleep(500);
  }
}

/** A readable list of a trace's spans for a failure message: service, kind, name, id, parent. */
const describeTrace = (spans: ZipkinSpan[]) =>
  spans.map((s) => `${s.localEndpoint.serviceName} ${s.kind ?? "-"} ${s.name} ${s.id}<-${s.parentId ?? "root"}`).sort();

const byName = (spans: ZipkinSpan[], service: string, name: string) =>
  spans.filter((s) => s.localEndpoint.serviceName === service && s.name === name);

/** The chain of span names from `span` up to the root. */
function ancestry(spans: ZipkinSpan[], span: ZipkinSpan): string[] {
  const byId = new Map(spans.map((s) => [s.id, s]));
  const chain: string[] = [];
  let at: ZipkinSpan | undefined = span;
  while (at) {
    chain.push(`${at.localEndpoint.serviceName}:${at.name}`);
    at = at.parentId ? byId.get(at.parentId) : undefined;
  }
  return chain;
}

beforeAll(async () => {
  // The first run resolves Zipkin's jar from Maven Central (cached afterwards).
  zipkin = await startPrivateZipkin();
  images = await startImageServer();
  smtp = await startSmtpSink();
  receiver = startReceiver();
  await ensureTopics(kafka, topicSpecs());
  await Promise.all([
    moveGroupToEnd(kafka, groups.media),
    moveGroupToEnd(kafka, groups.indexer),
    moveGroupToEnd(kafka, `${groups.leads}-counter`, [Topics.leadEvents.name]),
    moveGroupToEnd(kafka, `${groups.leads}-mailer`, [Topics.leadEvents.name]),
    moveGroupToEnd(kafka, groups.webhooks, [Topics.partnerEvents.name]),
    moveGroupToEnd(kafka, `${groups.webhooks}-reports`, [
      Topics.listingEvents.name,
      Topics.brokerEvents.name,
      Topics.partnerEvents.name,
    ]),
  ]);
  const apiPort = await freePort();
  apiBase = `http://127.0.0.1:${apiPort}`;
  const mediaDir = join(ROOT, ".data", "media-test");
  const [api] = await Promise.all([
    start("api", {
      API_PORT: String(apiPort),
      OPENSEARCH_INDEX_ALIAS: alias,
      MEDIA_DIR: mediaDir,
      PUBLIC_BASE_URL: apiBase,
    }),
    start("media", {
      MEDIA_CONSUMER_GROUP: groups.media,
      MEDIA_DIR: mediaDir,
      MEDIA_ALLOWED_HOSTS: `127.0.0.1:${images.port}`,
      MEDIA_GC_INTERVAL_MS: "0",
      PUBLIC_BASE_URL: apiBase,
    }),
    start("indexer", { OPENSEARCH_INDEX_ALIAS: alias, INDEXER_GROUP_ID: groups.indexer, RECONCILE_INTERVAL_MS: "0" }),
    start("leads", {
      LEADS_GROUP_PREFIX: groups.leads,
      SMTP_HOST: "127.0.0.1",
      SMTP_PORT: String(smtp.port),
      SMTP_FROM: "Leads <leads@trace.test>",
      PUBLIC_BASE_URL: apiBase,
    }),
    start("webhooks", {
      WEBHOOKS_CONSUMER_GROUP: groups.webhooks,
      REPORT_TRACKER_CONSUMER_GROUP: `${groups.webhooks}-reports`,
      WEBHOOK_ALLOWED_HOSTS: receiver.hostPort,
      WEBHOOK_POLL_MS: "100",
      WEBHOOK_RETENTION_DAYS: "0",
      PUBLIC_BASE_URL: apiBase,
    }),
  ]);
  apiHealth = `http://127.0.0.1:${api!.healthPort}`;
  const redis = new Redis(urls.REDIS_URL, { lazyConnect: true });
  partner = await createPartnerAdmin({ sql, redis }).createPartner({
    name: uniqueName("trace-partner"),
    leadTracking: false,
  });
  redis.disconnect();
  const endpoint = await put(apiBase, `/partner/v1/webhook-endpoints/${uniqueName("crm")}`, {
    url: receiver.url("/hooks/trace"),
    events: ["listing.media.processed", "listing.published"],
  });
  expect(endpoint.status).toBe(201);
  const broker = await put(
    apiBase,
    `/partner/v1/brokers/${brokerId}`,
    sample.broker({ forwardingEmail: `${uniqueName("broker")}@trace.test` }),
  );
  expect(broker.status).toBe(201);
}, 300_000);

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop()));
  await zipkin?.destroy();
  images?.stop();
  await smtp?.stop();
  receiver?.stop();
  const { Client } = await import("@opensearch-project/opensearch");
  const os = new Client({ node: urls.OPENSEARCH_URL });
  await os.indices.delete({ index: `${alias}-v*` }).catch(() => {});
  await os.close();
  await sql.end({ timeout: 5 });
}, 120_000);

describe("one trace per record's journey", () => {
  let listingId = 0;
  let journeyTraceId = "";

  test("a PUT with two photos: API, relay, media per photo, indexer and the webhook delivery, each under its parent, within 30 s", async () => {
    const externalId = uniqueName("listing");
    const requestId = uniqueName("trace-put");
    const started = Date.now();
    const res = await fetch(`${apiBase}/partner/v1/listings/${externalId}`, {
      method: "PUT",
      headers: { ...headers(), "x-request-id": requestId },
      body: JSON.stringify(
        sample.listing(brokerId, {
          photos: [
            { url: images.url(`/photo.jpg?trace=${externalId}`), sortKey: 1 },
            { url: images.url(`/photo-2.jpg?trace=${externalId}`), sortKey: 2 },
          ],
        }),
      ),
    });
    expect(res.status).toBe(201);
    listingId = ((await res.json()) as { serviceListingId: number }).serviceListingId;
    const traceparent = res.headers.get("traceparent")!;
    expect(traceparent.endsWith("-01")).toBe(true);
    const traceId = traceIdOf(traceparent)!;
    journeyTraceId = traceId;

    const complete = (spans: ZipkinSpan[]) =>
      byName(spans, "pss-webhooks", "webhook delivery").length > 0 &&
      byName(spans, "pss-media", "media photo").length === 2 &&
      spans.some((s) => s.localEndpoint.serviceName === "pss-indexer" && s.kind === "CONSUMER") &&
      ["download", "resize", "store"].every((n) => byName(spans, "pss-media", n).length === 2);
    const seen = await traceUntil(traceId, complete, started + 30_000);
    expect({ within30s: complete(seen), spans: describeTrace(seen) }).toMatchObject({ within30s: true });
    // What follows checks the trace's shape: let the spans still on their way arrive (each service sends every
    // second; the report tracker's facts come a step later), until two reads 2.5 s apart agree.
    let spans = seen;
    for (let stable = false, until = Date.now() + 20_000; !stable && Date.now() < until; ) {
      await Bun.sleep(2500);
      const again = await zipkin.trace(traceId);
      stable = again.length === spans.length;
      spans = again;
    }

    // One root, the API's request span, named by its route; every other span's parent is in the trace.
    const ids = new Set(spans.map((s) => s.id));
    const roots = spans.filter((s) => !s.parentId || !ids.has(s.parentId));
    expect(roots.map((s) => `${s.localEndpoint.serviceName}:${s.kind}:${s.name}`)).toEqual([
      "pss-api:SERVER:put /partner/v1/listings/:externallistingid",
    ]);
    expect(roots[0]!.tags).toMatchObject({
      "http.response.status_code": "201",
      "pss.external_listing_id": externalId,
      "pss.partner_id": partner.partnerId,
      "pss.request_id": requestId,
    });

    // The write, the relay's publish under it, then each consumer under the publish of the event it handled.
    const write = byName(spans, "pss-api", "listing write");
    expect(write).toHaveLength(1);
    expect(ancestry(spans, write[0]!)).toEqual([
      "pss-api:listing write",
      "pss-api:transaction",
      "pss-api:put /partner/v1/listings/:externallistingid",
    ]);
    const publish = byName(spans, "pss-api", `publish ${Topics.listingEvents.name}`);
    expect(publish.map((s) => [s.kind, s.parentId])).toEqual([["PRODUCER", write[0]!.id]]);
    const mediaHandling = spans.filter((s) => s.localEndpoint.serviceName === "pss-media" && s.kind === "CONSUMER");
    const indexing = spans.filter((s) => s.localEndpoint.serviceName === "pss-indexer" && s.kind === "CONSUMER");
    expect(mediaHandling.map((s) => s.parentId)).toEqual([publish[0]!.id]);
    expect(indexing.map((s) => s.parentId)).toEqual([publish[0]!.id]);
    expect(mediaHandling[0]!.tags).toMatchObject({ "pss.event_type": "listing.upserted", "pss.request_id": requestId });

    // A span per photo under media's handling, each with its download, resize and store.
    const photos = byName(spans, "pss-media", "media photo");
    expect(photos.map((s) => s.parentId)).toEqual([mediaHandling[0]!.id, mediaHandling[0]!.id]);
    for (const step of ["download", "resize", "store"])
      expect(new Set(byName(spans, "pss-media", step).map((s) => s.parentId))).toEqual(
        new Set(photos.map((p) => p.id)),
      );

    // The fact media wrote went out through the relay to the webhooks service, which delivered it to the endpoint.
    const delivery = byName(spans, "pss-webhooks", "webhook delivery");
    const chain = ancestry(spans, delivery[0]!);
    expect(chain[0]).toBe("pss-webhooks:webhook delivery");
    expect(chain.slice(-4)).toEqual([
      "pss-api:publish pss.listing-events.v1",
      "pss-api:listing write",
      "pss-api:transaction",
      "pss-api:put /partner/v1/listings/:externallistingid",
    ]);
    expect(chain).toContain("pss-api:publish pss.partner-events.v1");
    expect(delivery[0]!.kind).toBe("CLIENT");
    expect(receiver.requests("/hooks/trace").length).toBeGreaterThan(0);

    // What an operator searches by: the external listing ID, the request ID, the partner.
    for (const annotationQuery of [
      `pss.external_listing_id=${externalId}`,
      `pss.request_id=${requestId}`,
      `pss.partner_id=${partner.partnerId}`,
    ]) {
      const found = await zipkin.search({ serviceName: "pss-api", annotationQuery });
      expect({ annotationQuery, found: found.some((t) => t[0]?.traceId === traceId) }).toEqual({
        annotationQuery,
        found: true,
      });
    }
  }, 60_000);

  test("Zipkin's UI shows the journey: every service's spans on one timeline", async () => {
    expect(journeyTraceId).not.toBe("");
    const spans = await zipkin.trace(journeyTraceId);
    const services = new Set(spans.map((s) => s.localEndpoint.serviceName));
    // Names only: the browser resolves nothing else (its host rules refuse even a bare loopback address).
    const chromium = await launchChromium({ hosts: { "zipkin.test": "127.0.0.1" } });
    try {
      const page = await (await chromium.newContext({ viewport: { width: 1400, height: 1000 } })).newPage();
      const traceUrl = `${zipkin.url.replace("127.0.0.1", "zipkin.test")}/zipkin/traces/${journeyTraceId}`;
      const root = page.getByText("pss-api: put /partner/v1/listings/:externallistingid").first();
      // The header: the root span, how many services and spans (the rows below are drawn as they scroll into view).
      // A loaded machine can take long to run the UI's scripts: one more load before giving up, then a picture.
      for (let attempt = 1; ; attempt++) {
        await page.goto(traceUrl, { waitUntil: "networkidle", timeout: 60_000 });
        try {
          await root.waitFor({ timeout: 60_000 });
          break;
        } catch (err) {
          if (attempt >= 2) {
            mkdirSync(SCREENSHOTS, { recursive: true });
            await page.screenshot({ path: join(SCREENSHOTS, "zipkin-trace-not-shown.png") });
            throw new Error(
              `Zipkin's trace view did not show the root span: ${(await page.locator("body").innerText()).slice(0, 300)}`,
              { cause: err },
            );
          }
        }
      }
      const header = await page.locator("body").innerText();
      expect(header).toMatch(new RegExp(`Services\\s*${services.size}\\b`));
      // At least the spans read before (a late one may have arrived since).
      const total = Number(/Total Spans\s*(\d+)/.exec(header)?.[1]);
      expect(total).toBeGreaterThanOrEqual(spans.length);
      for (const row of ["pss-api: listing write", "pss-media: media photo"])
        expect({ row, shown: header.includes(row) }).toEqual({ row, shown: true });
      mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: join(SCREENSHOTS, "zipkin-trace.png"), fullPage: false });
    } finally {
      await chromium.close();
    }
  }, 300_000);

  test("a buyer's lead: its trace reaches the e-mail send", async () => {
    expect(listingId).toBeGreaterThan(0);
    const started = Date.now();
    const res = await fetch(`${apiBase}/v1/listings/${listingId}/leads`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Pat Buyer", email: "pat@example.com", message: "Is the oven included?" }),
    });
    expect(res.status).toBe(202);
    const traceId = traceIdOf(res.headers.get("traceparent"))!;
    const sent = (spans: ZipkinSpan[]) => byName(spans, "pss-leads", "lead e-mail send").length === 1;
    // Each service exports on its own schedule: the e-mail's span can reach Zipkin before the relay's or the API's,
    // so the wait is for the whole chain up to the request (asserted below), not for the e-mail's span alone.
    const root = "pss-api:post /v1/listings/:servicelistingid/leads";
    const whole = (spans: ZipkinSpan[]) =>
      sent(spans) && ancestry(spans, byName(spans, "pss-leads", "lead e-mail send")[0]!).at(-1) === root;
    const spans = await traceUntil(traceId, whole, started + 30_000);
    expect({ sent: sent(spans), spans: describeTrace(spans) }).toMatchObject({ sent: true });
    const chain = ancestry(spans, byName(spans, "pss-leads", "lead e-mail send")[0]!);
    expect(chain[0]).toBe("pss-leads:lead e-mail send");
    expect(chain.at(-1)).toBe(root);
    expect(chain).toContain(`pss-api:publish ${Topics.leadEvents.name}`);
    expect(smtp.received.length).toBeGreaterThan(0);
  }, 60_000);

  test("sampling at 0: a request and everything after it make no span, and nothing is exported", async () => {
    const port = await freePort();
    const quiet = await start("api", {
      API_PORT: String(port),
      TRACING_SAMPLE_RATIO: "0",
      OUTBOX_RELAY_ENABLED: "false",
      OPENSEARCH_INDEX_ALIAS: alias,
      PUBLIC_BASE_URL: apiBase,
    });
    const externalId = uniqueName("unsampled");
    const res = await put(
      `http://127.0.0.1:${port}`,
      `/partner/v1/listings/${externalId}`,
      sample.listing(brokerId, { photos: [] }),
    );
    expect(res.status).toBe(201);
    const traceparent = res.headers.get("traceparent")!;
    // A trace ID for the logs and headers, not sampled.
    expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    const id = ((await res.json()) as { serviceListingId: number }).serviceListingId;
    // The event went all the way (the other API's relay published it, the indexer indexed it) ...
    const deadline = Date.now() + 30_000;
    while ((await sql`SELECT index_state FROM listings WHERE id = ${id}`)[0]!.index_state !== "indexed") {
      if (Date.now() > deadline) throw new Error("the unsampled listing was not indexed within 30 s");
      await Bun.sleep(250);
    }
    // ... and after every exporter's interval has passed, Zipkin has nothing of it, and this API exported nothing.
    await Bun.sleep(3000);
    expect(await zipkin.trace(traceIdOf(traceparent)!)).toEqual([]);
    expect(await metric(`http://127.0.0.1:${quiet.healthPort}`, "tracing_spans_exported_total")).toBeNull();
    expect(
      await metric(`http://127.0.0.1:${quiet.healthPort}`, "http_requests_total", { method: "PUT", status: "201" }),
    ).toBe(1);
  }, 90_000);

  test("the store down for 20 s: every request is answered, spans are dropped and counted, export resumes", async () => {
    const droppedBefore =
      (await metric(apiHealth, "tracing_spans_dropped_total", { reason: "store_unavailable" })) ?? 0;
    await zipkin.stop();
    const down = Date.now();
    const answers: { status: number; ms: number; externalId: string }[] = [];
    while (Date.now() - down < 20_000) {
      const externalId = uniqueName("during-outage");
      const t = performance.now();
      const res = await put(apiBase, `/partner/v1/listings/${externalId}`, sample.listing(brokerId, { photos: [] }));
      answers.push({ status: res.status, ms: performance.now() - t, externalId });
      await Bun.sleep(400);
    }
    // Every write answered, promptly, and stored.
    expect(answers.length).toBeGreaterThan(20);
    expect(answers.filter((a) => a.status !== 201)).toEqual([]);
    expect(answers.filter((a) => a.ms > 2000)).toEqual([]);
    const stored = await sql`
      SELECT count(*)::int AS n FROM listings WHERE external_id = ANY(${answers.map((a) => a.externalId)}::text[])`;
    expect(stored[0]!.n).toBe(answers.length);
    // What could not be stored was dropped and counted.
    const dropped = (await metric(apiHealth, "tracing_spans_dropped_total", { reason: "store_unavailable" })) ?? 0;
    expect(dropped).toBeGreaterThan(droppedBefore);

    // The store is back (empty): the next request's trace is there again, without restarting anything.
    await zipkin.start();
    const externalId = uniqueName("after-outage");
    const started = Date.now();
    const res = await put(apiBase, `/partner/v1/listings/${externalId}`, sample.listing(brokerId, { photos: [] }));
    expect(res.status).toBe(201);
    const traceId = traceIdOf(res.headers.get("traceparent"))!;
    const spans = await traceUntil(traceId, (s) => s.some((x) => x.kind === "SERVER"), started + 30_000);
    expect(spans.some((s) => s.kind === "SERVER" && s.localEndpoint.serviceName === "pss-api")).toBe(true);
  }, 120_000);
});
