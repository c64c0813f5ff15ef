// Keeps the request log to its 7 days (migration 0045): run by the API's retention job, one instance at a time.
// Tomorrow's slot holds the day eight days ago, wholly outside the window: it is emptied with TRUNCATE (no DELETE,
// nothing to vacuum). Under the partition's exclusive lock it first checks that nothing in it is recent: an instance
// whose clock runs ahead may already have written a few of tomorrow's rows just before midnight, and those are
// kept (the old rows are then deleted instead). Daily counts older than 30 days are deleted.
import type postgres from "postgres";
import { REQUEST_LOG_DAYS, slotToEmpty } from "./request-log-slots.ts";

export const REQUEST_DAILY_DAYS = 30;

export interface RequestLogPrune {
  /** The partition emptied, or whose old rows were deleted. */
  partition: string;
  truncated: boolean;
  deletedDays: number;
}

export async function pruneRequestLog(sql: postgres.Sql, now: number = Date.now()): Promise<RequestLogPrune> {
  const partition = `api_request_log_${slotToEmpty(now)}`;
  const cutoff = new Date(now - REQUEST_LOG_DAYS * 86_400_000);
  const truncated = await sql.begin(async (tx) => {
    // Waits at most 2 s for readers of the log (the portal); tried again next round otherwise.
    await tx`SET LOCAL lock_timeout = '2s'`;
    await tx`LOCK TABLE ${tx(partition)} IN ACCESS EXCLUSIVE MODE`;
    const [recent] = await tx`SELECT 1 AS recent FROM ${tx(partition)} WHERE at >= ${cutoff} LIMIT 1`;
    if (recent) {
      await tx`DELETE FROM ${tx(partition)} WHERE at < ${cutoff}`;
      return false;
    }
    await tx`TRUNCATE ${tx(partition)}`;
    return true;
  });
  const deleted = await sql`
    DELETE FROM api_request_daily WHERE day < (${new Date(now).toISOString().slice(0, 10)}::date - ${REQUEST_DAILY_DAYS}::int)`;
  return { partition, truncated, deletedDays: deleted.count };
}
