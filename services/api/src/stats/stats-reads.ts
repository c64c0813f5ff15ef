// The partner route's read of a listing's buyer statistics: the daily rows the marketplace counts
// (services/marketplace/src/stats), with the listing's inquiries when the key may see them.
import type postgres from "postgres";

/** Views and impressions per day from `first` to `last` (inclusive), and inquiries when asked for. */
export async function readDailyStats(
  sql: postgres.Sql,
  args: { listingId: number; mode: string; first: string; last: string; inquiries: boolean },
): Promise<Map<string, { views: number; impressions: number; inquiries: number }>> {
  const out = new Map<string, { views: number; impressions: number; inquiries: number }>();
  const rows = await sql`
    SELECT to_char(day, 'YYYY-MM-DD') AS day, views, impressions FROM listing_stats_daily
    WHERE listing_id = ${args.listingId} AND day BETWEEN ${args.first}::date AND ${args.last}::date`;
  for (const r of rows) out.set(r.day, { views: r.views, impressions: r.impressions, inquiries: 0 });
  if (args.inquiries) {
    const leads = await sql`
      SELECT to_char((created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS day, count(*)::int AS n FROM leads
      WHERE listing_id = ${args.listingId} AND mode = ${args.mode}
        AND created_at >= ${args.first}::date AT TIME ZONE 'UTC' AND created_at < (${args.last}::date + 1) AT TIME ZONE 'UTC'
      GROUP BY 1`;
    for (const r of leads) {
      const day = out.get(r.day) ?? { views: 0, impressions: 0, inquiries: 0 };
      day.inquiries = r.n;
      out.set(r.day, day);
    }
  }
  return out;
}
