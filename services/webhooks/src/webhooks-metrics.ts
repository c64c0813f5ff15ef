// The webhooks service on /metrics (docs/webhooks.md, "Operations"; docs/operations.md, "Metrics"):
// - webhook_delivery_attempts_total{outcome}: attempts this process finished, by outcome (delivered,
//   retry_scheduled, failed: schedule used up, endpoint_gone: 410 disabled the endpoint, endpoint_disabled:
//   disabled while waiting or after 5 days of failures, discarded: the delivery was taken up elsewhere meanwhile);
// - webhook_delivery_attempt_duration_seconds: how long receivers took to answer (or to time out);
// - webhook_endpoints{state}: endpoints by state (active, failing, disabled_by_partner, disabled_gone,
//   disabled_failing), and webhook_deliveries_pending / webhook_deliveries_oldest_pending_age_seconds: deliveries
//   waiting for an attempt or a retry, read from PostgreSQL when Prometheus scrapes (at most once per 15 s; left
//   out while PostgreSQL does not answer).
import {
  Counter,
  gaugeFromSource,
  Histogram,
  LATENCY_BUCKETS_SECONDS,
  type Logger,
  type Metrics,
} from "@pss/service-kit";
import type postgres from "postgres";
import type { AttemptOutcome } from "./delivery/outcome.ts";
import { ENDPOINT_STATES, readEndpointStates } from "./endpoint-states.ts";

export interface WebhooksMetrics {
  attempt(outcome: AttemptOutcome, seconds: number | null): void;
}

/** `maxAgeMs`: how long a gauge read from PostgreSQL is reused (default 15 s; tests read fresh values). */
export function createWebhooksMetrics(deps: {
  metrics: Metrics;
  sql: postgres.Sql;
  logger: Logger;
  maxAgeMs?: number;
}): WebhooksMetrics {
  const maxAgeMs = deps.maxAgeMs ?? 15_000;
  const registers = [deps.metrics.registry];
  const attempts = new Counter({
    name: "webhook_delivery_attempts_total",
    help: "Webhook delivery attempts this process finished, by outcome: delivered, retry_scheduled, failed (retry schedule used up), endpoint_gone (410: endpoint disabled), endpoint_disabled (endpoint disabled: by the partner, or after failing every attempt for days), discarded (handled elsewhere meanwhile), postponed (a failure of ours, e.g. an unreadable signing secret: nothing sent, no attempt spent)",
    labelNames: ["outcome"],
    registers,
  });
  const duration = new Histogram({
    name: "webhook_delivery_attempt_duration_seconds",
    help: "Time from sending a webhook to the receiver's answer (or the timeout)",
    buckets: LATENCY_BUCKETS_SECONDS,
    registers,
  });
  const onError = (err: unknown) => deps.logger.debug("webhook metrics unavailable", { err: (err as Error).message });
  const endpoints = deps.metrics.source("webhook-endpoints", () => readEndpointStates(deps.sql), { maxAgeMs, onError });
  gaugeFromSource(deps.metrics, {
    name: "webhook_endpoints",
    help: "Partner webhook endpoints by state: active, failing (enabled, last attempt failed), disabled_by_partner, disabled_gone (a 410), disabled_failing (every attempt failed for WEBHOOK_DISABLE_AFTER_MS)",
    labelNames: ["state"],
    source: endpoints,
    samples: (states) => ENDPOINT_STATES.map((state) => ({ labels: { state }, value: states[state] })),
  });
  const pending = deps.metrics.source(
    "webhook-deliveries-pending",
    async () => {
      const [row] = await deps.sql<{ n: number; oldest_seconds: number | null }[]>`
        SELECT count(*)::int AS n, extract(epoch FROM now() - min(created_at))::float8 AS oldest_seconds
        FROM webhook_deliveries WHERE status = 'pending'`;
      return { count: row!.n, oldestSeconds: Math.max(0, row!.oldest_seconds ?? 0) };
    },
    { maxAgeMs, onError },
  );
  gaugeFromSource(deps.metrics, {
    name: "webhook_deliveries_pending",
    help: "Webhook deliveries waiting for their first attempt or a retry",
    source: pending,
    samples: (p) => [{ value: p.count }],
  });
  gaugeFromSource(deps.metrics, {
    name: "webhook_deliveries_oldest_pending_age_seconds",
    help: "Age of the oldest webhook delivery still waiting; 0 when none waits",
    source: pending,
    samples: (p) => [{ value: p.oldestSeconds }],
  });
  return {
    attempt(outcome, seconds) {
      attempts.inc({ outcome });
      if (seconds !== null) duration.observe(seconds);
    },
  };
}
