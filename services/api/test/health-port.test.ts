// The API process as deployed: public traffic on API_PORT; /healthz, /readyz and /metrics on API_HEALTH_PORT only.
import { afterAll, expect, test } from "bun:test";
import Redis from "ioredis";
import postgres from "postgres";
import { testUrls, uniqueName } from "../../../test/support/env.ts";
import { parsePrometheusText, select, valueOf } from "../../../test/support/prometheus-text.ts";
import { createPartnerAdmin } from "../src/admin/partner-admin.ts";
import { freePort, spawnService, waitUntil, type ServiceProcess } from "./faults/support/fault-harness.ts";
import { sample } from "./support/harness.ts";

const urls = testUrls();
const sql = postgres(urls.DATABASE_URL, { max: 2, onnotice: () => {} });
const started: ServiceProcess[] = [];
afterAll(async () => {
  await Promise.all(started.map((p) => p.stop()));
  await sql.end({ timeout: 5 });
});

async function startApi(env: Record<string, string> = {}) {
  const port = await freePort();
  const healthPort = await freePort();
  const api = await spawnService(
    "api",
    {
      API_PORT: String(port),
      API_HEALTH_PORT: String(healthPort),
      OPENSEARCH_INDEX_ALIAS: uniqueName("unused-listings"),
      ...env,
    },
    healthPort,
  );
  started.push(api);
  return { api, base: `http://127.0.0.1:${port}`, health: `http://127.0.0.1:${healthPort}` };
}

const scrape = async (health: string) => {
  const res = await fetch(`${health}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  return parsePrometheusText(await res.text());
};

test("probes and metrics answer on the health port only; the public port answers 404 for them and keeps /partner/v1/health", async () => {
  const { base, health } = await startApi({ OUTBOX_RELAY_ENABLED: "true" });
  await waitUntil("the API to be ready", async () => (await fetch(`${health}/readyz`)).ok, 30_000);
  expect(await (await fetch(`${health}/healthz`)).json()).toEqual({ status: "ok", service: "api" });
  for (const path of ["/healthz", "/readyz", "/metrics"]) {
    const res = await fetch(base + path);
    expect([path, res.status, await res.json()]).toEqual([path, 404, { status: "error", error: expect.any(String) }]);
  }

  const redis = new Redis(urls.REDIS_URL, { lazyConnect: true });
  const partner = await createPartnerAdmin({ sql, redis }).createPartner({
    name: uniqueName("health-port-partner"),
    leadTracking: false,
  });
  redis.disconnect();
  const headers = { authorization: `Bearer ${partner.apiKey}`, "content-type": "application/json" };
  expect((await fetch(`${base}/partner/v1/health`, { headers })).status).toBe(200);

  const before = await scrape(health);
  const brokerId = uniqueName("broker");
  const listingId = uniqueName("listing");
  expect(
    (
      await fetch(`${base}/partner/v1/brokers/${brokerId}`, {
        method: "PUT",
        headers,
        body: JSON.stringify(sample.broker()),
      })
    ).status,
  ).toBe(201);
  expect(
    (
      await fetch(`${base}/partner/v1/listings/${listingId}`, {
        method: "PUT",
        headers,
        body: JSON.stringify(sample.listing(brokerId)),
      })
    ).status,
  ).toBe(201);
  expect((await fetch(`${base}/no/such/${listingId}`)).status).toBe(404);

  const after = await waitUntil(
    "the relay to publish the two events",
    async () => {
      const s = await scrape(health);
      return (valueOf(s, "outbox_published_total") ?? 0) >= (valueOf(before, "outbox_published_total") ?? 0) + 2
        ? s
        : null;
    },
    30_000,
  );
  const route = "/partner/v1/listings/:externalListingId";
  expect(valueOf(after, "http_requests_total", { method: "PUT", route, status: "201" })).toBe(1);
  expect(valueOf(after, "http_request_duration_seconds_count", { method: "PUT", route, status: "201" })).toBe(1);
  expect(valueOf(after, "http_requests_total", { route: "/partner/v1/health", status: "200" })).toBeGreaterThanOrEqual(
    1,
  );
  expect(
    valueOf(after, "http_requests_total", { method: "GET", route: "unmatched", status: "404" }),
  ).toBeGreaterThanOrEqual(4);
  // Raw paths never become label values.
  expect(after.filter((s) => Object.values(s.labels).some((v) => v.includes(listingId)))).toEqual([]);
  expect(select(after, "outbox_pending_rows")).toHaveLength(1);
  expect(select(after, "outbox_oldest_pending_age_seconds")).toHaveLength(1);
  expect(select(after, "outbox_set_aside_rows")).toHaveLength(1);
  expect(valueOf(after, "outbox_relay_active")).toBe(1);
  expect(valueOf(after, "metrics_source_up", { source: "outbox" })).toBe(1);
  expect(valueOf(after, "nodejs_eventloop_lag_p99_seconds", { service: "api" })).toBeGreaterThanOrEqual(0);
}, 90_000);

test("with PostgreSQL unreachable the scrape still answers at once, leaving the outbox gauges out", async () => {
  const closed = await freePort();
  const { health } = await startApi({
    DATABASE_URL: `postgres://pss:pss@127.0.0.1:${closed}/nowhere`,
    OUTBOX_RELAY_ENABLED: "false",
  });
  const began = performance.now();
  const samples = await scrape(health);
  expect(performance.now() - began).toBeLessThan(5000);
  expect(select(samples, "outbox_pending_rows")).toEqual([]);
  expect(valueOf(samples, "metrics_source_up", { source: "outbox" })).toBe(0);
  expect(select(samples, "process_cpu_seconds_total")).toHaveLength(1);
  expect((await fetch(`${health}/readyz`)).status).toBe(503);
}, 60_000);
