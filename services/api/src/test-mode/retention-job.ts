// The retention job (docs/sandbox.md): deletes test records nobody wrote for TEST_DATA_RETENTION_DAYS, change
// history older than HISTORY_RETENTION_DAYS and answers to Idempotency-Keys older than IDEMPOTENCY_KEY_RETENTION_HOURS,
// and keeps the request log to its 7 days (docs/portal.md). Every API instance runs the timer; the lease "retention-job" (a row
// in leader_leases, leader-lease.ts: works through a transaction-pooling PgBouncer) lets one of them work at a
// time (the others skip that round), like the outbox relay. A failed round (database
// down) is logged and tried again next round; it never stops the process.
import { createLeaderLease, createPeriodicJob, whileLeading, type Logger } from "@pss/service-kit";
import type postgres from "postgres";
import { DEFAULT_IDEMPOTENCY_RETENTION_HOURS, purgeIdempotencyKeys } from "@pss/http-kit";
import { pruneRequestLog, type RequestLogPrune } from "../request-log/request-log-retention.ts";
import { purgeOldHistory, purgeTestData, type PurgeCounts } from "./test-data-purge.ts";

/** The lease a working round holds (leader_leases.name), renewed while it runs, released when it ends. */
export const RETENTION_LEASE = "retention-job";
const RETENTION_LEASE_MS = 60_000;
const DAY_MS = 24 * 3600 * 1000;

export interface RetentionJobOptions {
  sql: postgres.Sql;
  logger: Logger;
  testDataRetentionDays: number;
  historyRetentionDays: number;
  /** Answers kept for Idempotency-Keys are deleted after this many hours (default 24). */
  idempotencyRetentionHours?: number;
  /** Between rounds; 0: never runs on its own (runOnce still works). */
  intervalMs: number;
  /** Before the first round (default: a minute, or the interval if shorter). */
  firstDelayMs?: number;
  now?: () => number;
}

export type RetentionRound =
  | { ran: false }
  | { ran: true; testData: PurgeCounts; historyEntries: number; requestLog: RequestLogPrune | null };

export function createRetentionJob(opts: RetentionJobOptions) {
  const log = opts.logger.child({ component: "retention-job" });
  const now = opts.now ?? Date.now;
  const lease = createLeaderLease({ sql: opts.sql, name: RETENTION_LEASE, ttlMs: RETENTION_LEASE_MS });

  /** One round, if no other instance holds the lease. */
  async function runOnce(): Promise<RetentionRound> {
    const round = await whileLeading(lease, log, async () => {
      const testData = await purgeTestData(opts.sql, {
        olderThan: new Date(now() - opts.testDataRetentionDays * DAY_MS),
      });
      const historyEntries = await purgeOldHistory(opts.sql, new Date(now() - opts.historyRetentionDays * DAY_MS));
      await purgeIdempotencyKeys(opts.sql, opts.idempotencyRetentionHours ?? DEFAULT_IDEMPOTENCY_RETENTION_HOURS);
      if (testData.listings + testData.brokers + testData.leads + historyEntries > 0)
        log.info("retention: old test records and history deleted", { ...testData, historyEntries });
      // Its own failure (a reader holding the partition past the lock timeout) is tried again next round.
      const requestLog = await pruneRequestLog(opts.sql, now()).catch((err: Error) => {
        log.warn("retention: emptying the request log's old day failed; trying again next round", { err: err.message });
        return null;
      });
      return { ran: true as const, testData, historyEntries, requestLog };
    });
    return round ?? { ran: false };
  }

  const job = createPeriodicJob({
    name: "retention job",
    logger: log,
    tick: () => runOnce().then(() => {}),
    intervalMs: opts.intervalMs,
    firstDelayMs: opts.firstDelayMs ?? Math.min(60_000, opts.intervalMs),
    failureMessage: "retention round failed; trying again next round",
  });

  return {
    runOnce,
    start() {
      if (opts.intervalMs > 0) job.start();
    },
    stop: () => job.stop(),
  };
}

export type RetentionJob = ReturnType<typeof createRetentionJob>;
