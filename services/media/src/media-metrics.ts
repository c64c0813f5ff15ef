// The media service on /metrics (docs/operations.md, "Metrics"):
// - counters of what this process's jobs ended as (ready, failed, retry, discarded) and why they failed;
// - how long a job took (download, transform, store, record);
// - images not settled, by state and failure reason, read from PostgreSQL when Prometheus scrapes (partial
//   indexes of migration 0009; at most once per 15 s; left out while PostgreSQL does not answer).
// Failure reasons are the service's own fixed sentences (failures.ts): bounded label values.
import { Counter, gaugeFromSource, Histogram, type Logger, type Metrics } from "@pss/service-kit";
import type postgres from "postgres";
import type { JobOutcome } from "./jobs/media-jobs.ts";

export type MediaKind = "photo" | "avatar";

export interface MediaMetrics {
  job(kind: MediaKind, outcome: JobOutcome, failureReason: string | null, seconds: number): void;
}

interface UnsettledRow {
  kind: MediaKind;
  state: "pending" | "failed";
  reason: string | null;
  n: number;
}

export function createMediaMetrics(deps: { metrics: Metrics; sql: postgres.Sql; logger: Logger }): MediaMetrics {
  const registers = [deps.metrics.registry];
  const jobs = new Counter({
    name: "media_jobs_total",
    help: "Image jobs finished by this process, by kind and outcome (ready, failed, retry, discarded, postponed: given back unspent at a stop during an outage of ours)",
    labelNames: ["kind", "outcome"],
    registers,
  });
  const failures = new Counter({
    name: "media_job_failures_total",
    help: "Image jobs that failed (for good or to be retried), by kind and failure reason",
    labelNames: ["kind", "reason"],
    registers,
  });
  const duration = new Histogram({
    name: "media_job_duration_seconds",
    help: "Time one image job took: download, transform, store and record",
    labelNames: ["kind"],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40],
    registers,
  });

  const unsettled = deps.metrics.source(
    "media-images",
    () =>
      deps.sql<UnsettledRow[]>`
        SELECT 'photo' AS kind, state, failure_reason AS reason, count(*)::int AS n FROM listing_photos WHERE state <> 'ready' GROUP BY state, failure_reason
        UNION ALL
        SELECT 'avatar', avatar_state, avatar_failure_reason, count(*)::int FROM brokers WHERE avatar_state IN ('pending', 'failed') GROUP BY avatar_state, avatar_failure_reason`,
    {
      maxAgeMs: 15_000,
      onError: (err) => deps.logger.debug("media metrics unavailable", { err: (err as Error).message }),
    },
  );
  gaugeFromSource(deps.metrics, {
    name: "media_images",
    help: "Photos and avatars not settled yet, by kind and state: pending (waiting or being processed) or failed (ready ones are not counted)",
    labelNames: ["kind", "state"],
    source: unsettled,
    samples: (rows) =>
      (["photo", "avatar"] as const).flatMap((kind) =>
        (["pending", "failed"] as const).map((state) => ({
          labels: { kind, state },
          value: rows.filter((r) => r.kind === kind && r.state === state).reduce((sum, r) => sum + r.n, 0),
        })),
      ),
  });
  gaugeFromSource(deps.metrics, {
    name: "media_failed_images",
    help: "Photos and avatars that failed for good, by kind and failure reason (admin: media retry)",
    labelNames: ["kind", "reason"],
    source: unsettled,
    samples: (rows) =>
      rows
        .filter((r) => r.state === "failed")
        .map((r) => ({ labels: { kind: r.kind, reason: r.reason ?? "unknown" }, value: r.n })),
  });

  return {
    job(kind, outcome, failureReason, seconds) {
      jobs.inc({ kind, outcome });
      if (failureReason !== null && (outcome === "failed" || outcome === "retry"))
        failures.inc({ kind, reason: failureReason });
      duration.observe({ kind }, seconds);
    },
  };
}
