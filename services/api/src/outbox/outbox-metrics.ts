// The outbox on /metrics (docs/operations.md, "Metrics"):
// - what it holds, read from PostgreSQL when Prometheus scrapes (outbox-status.ts; each part answered from its
//   partial index, at most once per 5 s, left out while PostgreSQL does not answer). Served by every API process,
//   so the backlog is visible even while no relay runs, which is when it grows;
// - what the relay did, counted where it runs (relay process, or an API process with OUTBOX_RELAY_ENABLED).
import { Counter, Gauge, gaugeFromSource, type Logger, type Metrics } from "@pss/service-kit";
import type { OutboxStatus } from "./outbox-status.ts";

export function registerOutboxGauges(metrics: Metrics, status: OutboxStatus, logger: Logger): void {
  const backlog = metrics.source("outbox", () => status.backlog(), {
    maxAgeMs: 5_000,
    timeoutMs: 1_500,
    onError: (err) => logger.debug("outbox metrics unavailable", { err: (err as Error).message }),
  });
  gaugeFromSource(metrics, {
    name: "outbox_pending_rows",
    help: "Outbox rows waiting to be published to Kafka (the backlog)",
    source: backlog,
    samples: (b) => [{ value: b.pending }],
  });
  gaugeFromSource(metrics, {
    name: "outbox_oldest_pending_age_seconds",
    help: "Age of the oldest outbox row waiting to be published; 0 when none waits",
    source: backlog,
    samples: (b) => [{ value: b.oldestPendingAgeMs / 1000 }],
  });
  gaugeFromSource(metrics, {
    name: "outbox_set_aside_rows",
    help: "Outbox rows set aside because Kafka can never accept them (admin: outbox status, outbox retry)",
    source: backlog,
    samples: (b) => [{ value: b.setAside }],
  });
}

export interface RelayMetrics {
  published(rows: number): void;
  setAside(rows: number): void;
  /** Whether this process holds the relay lock (one relay is active at a time). */
  active(on: boolean): void;
}

export function createRelayMetrics(metrics: Metrics): RelayMetrics {
  const registers = [metrics.registry];
  const published = new Counter({
    name: "outbox_published_total",
    help: "Outbox rows this relay published to Kafka (rate: the publish rate)",
    registers,
  });
  const setAside = new Counter({
    name: "outbox_set_aside_total",
    help: "Outbox rows this relay set aside because Kafka can never accept them",
    registers,
  });
  const active = new Gauge({
    name: "outbox_relay_active",
    help: "1 while this process is the active outbox relay (holds the relay lock), else 0",
    registers,
  });
  return {
    published: (rows) => published.inc(rows),
    setAside: (rows) => setAside.inc(rows),
    active: (on) => active.set(on ? 1 : 0),
  };
}
