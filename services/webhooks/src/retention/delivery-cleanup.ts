// Deletes delivered and failed deliveries (with their attempts) older than the retention, in small batches so no
// statement holds many locks. Pending deliveries are never deleted.
import { createInterruptibleSleep, type Logger } from "@pss/service-kit";
import type postgres from "postgres";

export function createDeliveryCleanup(deps: { sql: postgres.Sql; logger: Logger; retentionDays: number; intervalMs?: number; batchSize?: number }) {
  const pause = createInterruptibleSleep();
  const batch = deps.batchSize ?? 1000;
  let running = false;
  let loop: Promise<void> | null = null;

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
      if (rows.length < batch || !running) return deleted;
    }
  }

  return {
    start() {
      if (running || deps.retentionDays === 0) return;
      running = true;
      loop = (async () => {
        while (running) {
          try {
            const deleted = await runOnce();
            if (deleted > 0) deps.logger.info("old webhook deliveries deleted", { deleted, retentionDays: deps.retentionDays });
          } catch (err) {
            deps.logger.warn("deleting old webhook deliveries failed; trying again later", { err: (err as Error).message });
          }
          await pause.sleep(deps.intervalMs ?? 3_600_000);
        }
      })();
    },
    async stop() {
      running = false;
      pause.wake();
      await loop;
    },
    runOnce,
  };
}
