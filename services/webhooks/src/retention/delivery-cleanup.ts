// Deletes delivered and failed deliveries (with their attempts) older than the retention, in small batches so no
// statement holds many locks. Pending deliveries are never deleted.
import { createPeriodicJob, type Logger } from "@pss/service-kit";
import type postgres from "postgres";

export function createDeliveryCleanup(deps: {
  sql: postgres.Sql;
  logger: Logger;
  retentionDays: number;
  intervalMs?: number;
  batchSize?: number;
}) {
  const batch = deps.batchSize ?? 1000;

  async function runOnce(): Promise<number> {
    let deleted = 0;
    for (;;) {
      const rows = await deps.sql`
        DELETE FROM webhook_deliveries WHERE id IN (
          SELECT id FROM webhook_deliveries
          WHERE status <> 'pending' AND created_at < now() - ${deps.retentionDays}::int * interval '1 day'
          LIMIT ${batch})
        RETURNING 1`;
      deleted += rows.length;
      if (rows.length < batch || !job.isRunning()) return deleted;
    }
  }

  const job = createPeriodicJob({
    name: "delivery cleanup",
    logger: deps.logger,
    intervalMs: deps.intervalMs ?? 3_600_000,
    failureMessage: "deleting old webhook deliveries failed; trying again later",
    async tick() {
      const deleted = await runOnce();
      if (deleted > 0)
        deps.logger.info("old webhook deliveries deleted", { deleted, retentionDays: deps.retentionDays });
    },
  });

  return {
    start() {
      if (deps.retentionDays !== 0) job.start();
    },
    stop: () => job.stop(),
    runOnce,
  };
}
