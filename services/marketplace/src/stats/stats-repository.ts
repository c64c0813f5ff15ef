// SQL of the buyer statistics: the daily visitor keys and the flusher's idempotent batch write (the partner API reads
// the daily rows: services/api/src/stats/stats-reads.ts).
import { randomBytes } from "node:crypto";
import type postgres from "postgres";

export interface StatsRow {
  listingId: number;
  day: string;
  views: number;
  impressions: number;
}

/**
 * Adds one batch of counts, once: the batch's ID is claimed in the same statement, so a retry of a batch whose
 * commit was not seen adds nothing. Rows of listings that no longer exist are skipped. Rows go in key order, so
 * concurrent flushes of several instances lock them in the same order (no deadlock).
 */
export async function writeStatsBatch(sql: postgres.Sql, batchId: string, rows: StatsRow[]): Promise<boolean> {
  const sorted = [...rows].sort((a, b) => a.listingId - b.listingId || a.day.localeCompare(b.day));
  const result = await sql`
    WITH claimed AS (INSERT INTO listing_stats_flushes (id) VALUES (${batchId}::uuid) ON CONFLICT DO NOTHING RETURNING id),
    counts AS (
      SELECT * FROM unnest(${sorted.map((r) => r.listingId)}::bigint[], ${sorted.map((r) => r.day)}::date[], ${sorted.map((r) => r.views)}::int[],
                           ${sorted.map((r) => r.impressions)}::int[]) WITH ORDINALITY AS u(listing_id, day, views, impressions, n)
    )
    INSERT INTO listing_stats_daily AS s (listing_id, day, views, impressions)
    SELECT c.listing_id, c.day, c.views, c.impressions FROM counts c JOIN listings l ON l.id = c.listing_id
    WHERE EXISTS (SELECT 1 FROM claimed) ORDER BY c.n
    ON CONFLICT (listing_id, day) DO UPDATE SET views = s.views + excluded.views, impressions = s.impressions + excluded.impressions
    RETURNING 1`;
  return result.length > 0;
}

/** The day's visitor key (YYYY-MM-DD): created by whichever instance asks first, the same for all of them. */
export async function dayKey(sql: postgres.Sql, day: string): Promise<Buffer> {
  await sql`INSERT INTO listing_stats_day_keys (day, key) VALUES (${day}::date, ${randomBytes(32)}) ON CONFLICT (day) DO NOTHING`;
  const [row] = await sql<{ key: Buffer }[]>`SELECT key FROM listing_stats_day_keys WHERE day = ${day}::date`;
  if (!row) throw new Error("day key vanished");
  return row.key;
}

/** Keys of days before `day`: once gone, those days' visitor hashes cannot be linked to anyone. */
export async function deleteDayKeysBefore(sql: postgres.Sql, day: string): Promise<void> {
  await sql`DELETE FROM listing_stats_day_keys WHERE day < ${day}::date`;
}

export async function deleteOldFlushIds(sql: postgres.Sql, olderThanMs: number): Promise<void> {
  await sql`DELETE FROM listing_stats_flushes WHERE flushed_at < ${new Date(Date.now() - olderThanMs)}`;
}
