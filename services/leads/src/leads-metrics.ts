// The leads service on /metrics (docs/operations.md, "Metrics"):
// - delivery attempts this process made, by outcome (sent, retry, failed, skipped: already handled elsewhere;
//   superseded: the claim ran out mid-send and another worker took the lead, so this outcome was not recorded);
// - lead deliveries not settled, by state (pending, sending, failed), read from PostgreSQL when Prometheus
//   scrapes (partial index of migration 0009; at most once per 15 s; left out while PostgreSQL does not answer).
//   Sent leads are not counted there: leads_delivery_attempts_total{outcome="sent"} counts them.
import { Counter, gaugeFromSource, type Logger, type Metrics } from "@pss/service-kit";
import type postgres from "postgres";
import type { ForwardOutcome } from "./forwarding/lead-forwarder.ts";

export interface LeadsMetrics {
  attempt(outcome: ForwardOutcome): void;
}

const UNSETTLED = ["pending", "sending", "failed"] as const;

export function createLeadsMetrics(deps: { metrics: Metrics; sql: postgres.Sql; logger: Logger }): LeadsMetrics {
  const attempts = new Counter({
    name: "leads_delivery_attempts_total",
    help: "Lead e-mail deliveries this process attempted, by outcome: sent, retry (deferred), failed (for good), skipped (already sent, failed, not due or taken by another worker), postponed (our relay unavailable: no attempt spent), superseded (the claim ran out mid-send and another worker took the lead: this outcome was not recorded)",
    labelNames: ["outcome"],
    registers: [deps.metrics.registry],
  });
  const states = deps.metrics.source(
    "lead-deliveries",
    () =>
      deps.sql<
        { state: string; n: number }[]
      >`SELECT delivery_state AS state, count(*)::int AS n FROM leads WHERE delivery_state <> 'sent' GROUP BY delivery_state`,
    {
      maxAgeMs: 15_000,
      onError: (err) => deps.logger.debug("lead metrics unavailable", { err: (err as Error).message }),
    },
  );
  gaugeFromSource(deps.metrics, {
    name: "leads_deliveries",
    help: "Leads whose e-mail delivery has not succeeded, by state: pending (waiting for an attempt or a retry), sending (an attempt in progress), failed (given up)",
    labelNames: ["state"],
    source: states,
    samples: (rows) =>
      UNSETTLED.map((state) => ({ labels: { state }, value: rows.find((r) => r.state === state)?.n ?? 0 })),
  });
  return { attempt: (outcome) => attempts.inc({ outcome }) };
}
