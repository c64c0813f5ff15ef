// Request count and latency by route template, method and status. Labels stay low-cardinality whatever clients
// send: the route is the router's template ("/partner/v1/listings/:externalListingId", never the raw path),
// requests no route matched share one value, and methods outside the standard set share "OTHER".
import { Counter, Histogram } from "prom-client";
import { LATENCY_BUCKETS_SECONDS, type Metrics } from "./metrics.ts";

/** The route label of a request no route matched (404, 405 and the like). */
export const UNMATCHED_ROUTE = "unmatched";

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT", "QUERY"]);

export interface HttpMetrics {
  observe(request: { method: string; route: string | null; status: number; seconds: number }): void;
}

export function createHttpMetrics(metrics: Metrics): HttpMetrics {
  const labelNames = ["method", "route", "status"] as const;
  const requests = new Counter({
    name: "http_requests_total",
    help: "HTTP requests answered, by method, route template and status",
    labelNames,
    registers: [metrics.registry],
  });
  const duration = new Histogram({
    name: "http_request_duration_seconds",
    help: "Time from receiving an HTTP request to finishing its response, by method, route template and status",
    labelNames,
    buckets: LATENCY_BUCKETS_SECONDS,
    registers: [metrics.registry],
  });
  return {
    observe({ method, route, status, seconds }) {
      const labels = {
        method: METHODS.has(method) ? method : "OTHER",
        route: route || UNMATCHED_ROUTE,
        status: String(status),
      };
      requests.inc(labels);
      duration.observe(labels, seconds);
    },
  };
}
