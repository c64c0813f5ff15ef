// The retention job (docs/sandbox.md): deletes test records nobody wrote for TEST_DATA_RETENTION_DAYS and change
// history older than HISTORY_RETENTION_DAYS. Every API instance runs the timer; a PostgreSQL advisory lock lets
// one of them work at a time (the others skip that round), like the outbox relay. A failed round (database
// down) is logged and tried again next round; it never stops the process.
import { createInterruptibleSleep, type Logger } from "@pss/service-kit";
import type postgres from "postgres";
import { purgeOldHistory, purgeTestData, type PurgeCounts } from "./test-data-purge.ts";

/** "retention job" among this application's advisory locks (727001 migrations, 727002 outbox relay and reindex, 727003 the indexer's reconciler). */
const RETENTION_LOCK_ID = 727_004;
const DAY_MS = 24 * 3600 * 1000;

export interface RetentionJobOptions {
  sql: postgres.Sql;
  logger: Logger;
  testDataRetentionDays: number;
  historyRetentionDays: number;
  /** Between rounds; 0: never runs on its own (runOnce still works). */
  intervalMs: number;
  /** Before the first round (default: a minute, or the interval if shorter). */
  firstDelayMs?: number;
  now?: () => number;
}

export type RetentionRound = { ran: false } | { ran: true; testData: PurgeCounts; historyEntries: number };

export function createRetentionJob(opts: RetentionJobOptions) {
  const log = opts.logger.child({ component: "retention-job" });
  const now = opts.now ?? Date.now;
  const { sleep, wake } = createInterruptibleSleep();
  let running = false;
  let loop: Promise<void> | null = null;

  /** One round, if no other instance holds the lock. */
  async function runOnce(): Promise<RetentionRound> {
    const conn = await opts.sql.reserve();
    try {
      const [{ locked }] = (await conn`SELECT pg_try_advisory_lock(${RETENTION_LOCK_ID}) AS locked`) as unknown as [{ locked: boolean }];
      if (!locked) return { ran: false };
      try {
        const testData = await purgeTestData(opts.sql, { olderThan: new Date(now() - opts.testDataRetentionDays * DAY_MS) });
        const historyEntries = await purgeOldHistory(opts.sql, new Date(now() - opts.historyRetentionDays * DAY_MS));
        if (testData.listings + testData.brokers + testData.leads + historyEntries > 0) log.info("retention: old test records and history deleted", { ...testData, historyEntries });
        return { ran: true, testData, historyEntries };
      } finally {
        await conn`SELECT pg_advisory_unlock(${RETENTION_LOCK_ID})`.catch(() => {});
      }
    } finally {
      conn.release();
    }
  }

  async function run(): Promise<void> {
    await sleep(opts.firstDelayMs ?? Math.min(60_000, opts.intervalMs));
    while (running) {
      try {
        await runOnce();
      } catch (err) {
        log.warn("retention round failed; trying again next round", { err: (err as Error).message });
      }
      if (running) await sleep(opts.intervalMs);
    }
  }

  return {
    runOnce,
    start() {
      if (running || opts.intervalMs <= 0) return;
      running = true;
      loop = run();
    },
    async stop() {
      running = false;
      wake();
      await loop;
    },
  };
}

export type RetentionJob = ReturnType<typeof createRetentionJob>;
