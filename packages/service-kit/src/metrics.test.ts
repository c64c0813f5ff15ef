import { expect, test } from "bun:test";
import { lagOf } from "./consumer-metrics.ts";
import { createHealthRoutes } from "./health.ts";
import { createHttpMetrics } from "./http-metrics.ts";
import { createMetrics, createScrapeSource, gaugeFromSource } from "./metrics.ts";
import { parsePrometheusText, valueOf } from "../../../test/support/prometheus-text.ts";

/** The value of one series, e.g. sample(text, 'http_requests_total{method="GET",status="200"}'): labels in any order. */
function sample(text: string, series: string): number | undefined {
  const m = /^([^{]+)(?:\{(.*)\})?$/.exec(series)!;
  const labels = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!]));
  const exact = parsePrometheusText(text).filter(
    (s) => s.name === m[1] && Object.keys(s.labels).length === Object.keys(labels).length,
  );
  return valueOf(exact, m[1]!, labels);
}

test("each process gets its own registry with process and event-loop metrics labelled by service", async () => {
  const a = createMetrics({ service: "indexer" });
  const b = createMetrics({ service: "media" });
  expect(a.registry).not.toBe(b.registry);
  const text = await a.render();
  expect(text).toContain('process_cpu_seconds_total{service="indexer"}');
  expect(text).toContain('nodejs_eventloop_lag_p99_seconds{service="indexer"}');
  expect(text).toContain('process_resident_memory_bytes{service="indexer"}');
  expect(a.contentType).toStartWith("text/plain; version=0.0.4");
});

test("a scrape-time source loads once per interval however many gauges read it", async () => {
  let clock = 0;
  let loads = 0;
  const metrics = createMetrics({ service: "svc", defaultMetrics: false, now: () => clock });
  const source = metrics.source("db", async () => ({ pending: ++loads * 10 }), { maxAgeMs: 1000 });
  gaugeFromSource(metrics, { name: "a_rows", help: "a", source, samples: (v) => [{ value: v.pending }] });
  gaugeFromSource(metrics, { name: "b_rows", help: "b", source, samples: (v) => [{ value: v.pending + 1 }] });
  let text = await metrics.render();
  expect([sample(text, 'a_rows{service="svc"}'), sample(text, 'b_rows{service="svc"}'), loads]).toEqual([10, 11, 1]);
  clock = 500;
  await metrics.render();
  expect(loads).toBe(1);
  clock = 1500;
  text = await metrics.render();
  expect([sample(text, 'a_rows{service="svc"}'), loads]).toEqual([20, 2]);
  expect(sample(text, 'metrics_source_up{source="db",service="svc"}')).toBe(1);
});

test("a failing or hanging source leaves its gauges out and the scrape still answers quickly", async () => {
  const metrics = createMetrics({ service: "svc", defaultMetrics: false });
  const failing = metrics.source("postgres", async () =>
    Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:5432")),
  );
  const hanging = metrics.source("kafka", () => new Promise<number>(() => {}), { timeoutMs: 50 });
  gaugeFromSource(metrics, { name: "outbox_rows", help: "x", source: failing, samples: (v: number) => [{ value: v }] });
  gaugeFromSource(metrics, { name: "lag_messages", help: "x", source: hanging, samples: (v) => [{ value: v }] });
  const started = performance.now();
  const text = await metrics.render();
  expect(performance.now() - started).toBeLessThan(1000);
  expect(text).toContain("# TYPE outbox_rows gauge");
  expect(sample(text, 'outbox_rows{service="svc"}')).toBeUndefined();
  expect(sample(text, 'lag_messages{service="svc"}')).toBeUndefined();
  expect(sample(text, 'metrics_source_up{source="postgres",service="svc"}')).toBe(0);
  expect(sample(text, 'metrics_source_up{source="kafka",service="svc"}')).toBe(0);
  expect(text).not.toContain("ECONNREFUSED");
});

test("a source that recovers is served again after its interval", async () => {
  let clock = 0;
  let up = false;
  const source = createScrapeSource(
    async () => {
      if (!up) throw new Error("down");
      return 7;
    },
    { maxAgeMs: 100, now: () => clock },
  );
  expect(await source.read()).toBeNull();
  up = true;
  expect(await source.read()).toBeNull(); // the failure is cached for the interval too
  clock = 200;
  expect(await source.read()).toBe(7);
});

test("HTTP metrics keep labels bounded: route templates, one value for unmatched routes, OTHER for odd methods", async () => {
  const metrics = createMetrics({ service: "api", defaultMetrics: false });
  const http = createHttpMetrics(metrics);
  http.observe({ method: "PUT", route: "/partner/v1/listings/:externalListingId", status: 200, seconds: 0.012 });
  http.observe({ method: "PUT", route: "/partner/v1/listings/:externalListingId", status: 200, seconds: 0.02 });
  http.observe({ method: "GET", route: null, status: 404, seconds: 0.001 });
  http.observe({ method: "BREW", route: "", status: 501, seconds: 0.001 });
  const text = await metrics.render();
  expect(
    sample(
      text,
      'http_requests_total{method="PUT",route="/partner/v1/listings/:externalListingId",status="200",service="api"}',
    ),
  ).toBe(2);
  expect(sample(text, 'http_requests_total{method="GET",route="unmatched",status="404",service="api"}')).toBe(1);
  expect(sample(text, 'http_requests_total{method="OTHER",route="unmatched",status="501",service="api"}')).toBe(1);
  expect(
    sample(
      text,
      'http_request_duration_seconds_count{method="PUT",route="/partner/v1/listings/:externalListingId",status="200",service="api"}',
    ),
  ).toBe(2);
  expect(
    sample(
      text,
      'http_request_duration_seconds_bucket{le="0.025",method="PUT",route="/partner/v1/listings/:externalListingId",status="200",service="api"}',
    ),
  ).toBe(2);
});

test("consumer lag is the end offset minus the committed offset; a group that never committed starts at the first retained message", () => {
  expect(
    lagOf(
      [
        { partition: 0, offset: "40" },
        { partition: 1, offset: "-1" },
      ],
      [
        { partition: 0, high: "42", low: "0" },
        { partition: 1, high: "10", low: "4" },
        { partition: 2, high: "5", low: "5" },
      ],
    ),
  ).toEqual([
    { partition: 0, lag: 2 },
    { partition: 1, lag: 6 },
    { partition: 2, lag: 0 },
  ]);
});

test("GET /metrics on the health routes answers the Prometheus text format", async () => {
  const metrics = createMetrics({ service: "leads" });
  const routes = createHealthRoutes({ service: "leads", checks: {}, metrics });
  const res = await routes.handle(new Request("http://localhost/metrics"));
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe(metrics.contentType);
  expect(await res.text()).toContain("# TYPE process_cpu_seconds_total counter");
  const without = createHealthRoutes({ service: "leads", checks: {} });
  expect((await without.handle(new Request("http://localhost/metrics"))).status).toBe(404);
});
