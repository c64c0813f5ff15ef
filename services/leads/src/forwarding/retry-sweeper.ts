// Retries deferred deliveries and picks up abandoned ones. Driven by the leads table, not by Kafka: a lead
// waiting minutes for its next attempt never holds up a partition, and its schedule survives restarts.
import { createPeriodicJob, type Logger, type TickContext } from "@pss/service-kit";
import type postgres from "postgres";
import { dueLeadIds } from "./delivery-repository.ts";
import type { DeliveryPolicy, LeadForwarder } from "./lead-forwarder.ts";

export interface RetrySweeperDeps {
  sql: postgres.Sql;
  forwarder: LeadForwarder;
  logger: Logger;
  policy: DeliveryPolicy;
  intervalMs: number;
  /** How long a new lead is left to the event path before the sweeper sends it. */
  firstAttemptGraceMs: number;
  batchSize?: number;
  /** Only these partners' leads (tests sharing a database); absent = all. */
  partnerIds?: () => string[];
}

export function createRetrySweeper(deps: RetrySweeperDeps) {
  const log = deps.logger.child({ component: "retry-sweeper" });
  const batchSize = deps.batchSize ?? 20;

  async function round(ctx: TickContext): Promise<number> {
    // An outcome waiting for PostgreSQL goes first: its claim may have run out during the outage.
    if (deps.forwarder.waitingForDatabase?.()) return 0;
    const ids = await dueLeadIds(deps.sql, {
      limit: batchSize,
      firstAttemptGraceMs: deps.firstAttemptGraceMs,
      claimTimeoutMs: deps.policy.claimTimeoutMs,
      partnerIds: deps.partnerIds?.(),
    });
    for (const id of ids) {
      if (ctx.isStopping()) break;
      await deps.forwarder
        .forward(id)
        .catch((err) => log.warn("retry failed", { leadId: id, err: (err as Error).message }));
    }
    return ids.length;
  }

  // A full batch means more are waiting: go on at once.
  const job = createPeriodicJob({
    name: "retry sweeper",
    logger: log,
    intervalMs: deps.intervalMs,
    failureMessage: "sweep failed",
    tick: async (ctx) => (await round(ctx)) >= batchSize,
  });

  return {
    start: () => job.start(),
    /** Stops after the lead in hand is done. */
    stop: () => job.stop(),
  };
}
