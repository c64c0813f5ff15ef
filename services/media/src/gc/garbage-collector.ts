// Deletes stored files no record references any more. Files are shared (content-addressed), so a file goes only
// when no listing photo and no current avatar names it, and only after a grace period: a file just written (or
// just reused, which refreshes it) may belong to a result whose database write has not committed yet.
// The grace period alone cannot protect a reused file: a job may refresh it just after the collector's last look
// and commit its reference before the delete. So the last look (references and age) and the delete happen under
// the name's lock (media-repository.ts `whileUnreferenced`), and a writer holds the same lock, shared, from
// checking its files are stored (storing again any that is gone) until its reference commits (docs/media.md).
import { createLeaderLease, createPeriodicJob, whileLeading, type Logger, type MediaStorage } from "@pss/service-kit";
import type postgres from "postgres";
import type { MediaRepository } from "../jobs/media-repository.ts";

/**
 * One sweep at a time across all media instances sharing the storage and database: the lease "media-gc"
 * (leader-lease.ts; works through a transaction-pooling PgBouncer), renewed while the sweep lasts.
 */
export const GC_LEASE = "media-gc";
const GC_LEASE_MS = 60_000;
const BATCH = 500;

export interface SweepResult {
  examined: number;
  deleted: number;
  skipped: boolean;
}

export interface GarbageCollector {
  sweep(now?: Date): Promise<SweepResult>;
  start(): void;
  stop(): Promise<void>;
}

export function createGarbageCollector(deps: {
  sql: postgres.Sql;
  repository: MediaRepository;
  storage: MediaStorage;
  graceMs: number;
  intervalMs: number;
  logger: Logger;
}): GarbageCollector {
  const log = deps.logger.child({ component: "media-gc" });
  const lease = createLeaderLease({ sql: deps.sql, name: GC_LEASE, ttlMs: GC_LEASE_MS });

  async function collect(batch: string[], cutoff: Date): Promise<number> {
    let deleted = 0;
    for (const name of await deps.repository.unreferenced(batch)) {
      // Look again, with the name locked: a result may have reused (and so refreshed) the file since it was listed.
      const removed = await deps.repository.whileUnreferenced(name, async () => {
        const file = await deps.storage.stat(name);
        if (!file || file.modifiedAt >= cutoff) return false;
        await deps.storage.delete(name);
        return true;
      });
      if (removed) deleted++;
    }
    return deleted;
  }

  async function sweep(now = new Date()): Promise<SweepResult> {
    const swept = await whileLeading(lease, log, async () => {
      const cutoff = new Date(now.getTime() - deps.graceMs);
      let examined = 0;
      let deleted = 0;
      let batch: string[] = [];
      for await (const file of deps.storage.list()) {
        if (file.modifiedAt >= cutoff) continue;
        batch.push(file.name);
        examined++;
        if (batch.length >= BATCH) {
          deleted += await collect(batch, cutoff);
          batch = [];
        }
      }
      deleted += await collect(batch, cutoff);
      await deps.storage.removeAbandonedWrites(cutoff);
      if (deleted > 0) log.info("deleted unreferenced media files", { examined, deleted });
      return { examined, deleted, skipped: false };
    });
    return swept ?? { examined: 0, deleted: 0, skipped: true };
  }

  const job = createPeriodicJob({
    name: "media garbage collection",
    logger: log,
    intervalMs: deps.intervalMs,
    firstDelayMs: deps.intervalMs,
    failureMessage: "media garbage collection failed",
    tick: () => sweep().then(() => {}),
  });

  return {
    sweep,
    start() {
      if (deps.intervalMs > 0) job.start();
    },
    stop: () => job.stop(),
  };
}
