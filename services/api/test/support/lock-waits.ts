// Tests that hold a lock to stop a statement midway wait, before going on, until that statement is queued on it.
import type postgres from "postgres";
import { until } from "../../../../test/support/until.ts";

/**
 * Waits until a statement of this database whose text contains `fragment` (a LIKE pattern piece) waits for a lock.
 * The fragment is a parameter, so this query's own text never matches it.
 */
export async function untilWaitingOnLock(sql: postgres.Sql, fragment: string, what: string): Promise<void> {
  await until(
    what,
    async () =>
      (
        await sql`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
          AND query LIKE ${`%${fragment}%`}`
      ).length > 0,
    10_000,
    20,
  );
}
