// What the processing report reads beyond the stored listing: the step times (migration 0025), when the listing
// entered its current status, and when each photo last changed.
import type postgres from "postgres";

type Tx = postgres.TransactionSql | postgres.Sql;

export interface ReportTimes {
  publishedAt: Date | null;
  indexStateAt: Date | null;
  descriptionOptimizedAt: Date | null;
  statusSince: Date | null;
  photoTimes: Map<string, Date>;
}

export async function reportTimes(tx: Tx, listingId: number): Promise<ReportTimes> {
  const [row] = await tx`
    SELECT l.published_at, l.index_state_at, l.description_optimized_at,
           (SELECT h.changed_at FROM listing_status_history h WHERE h.listing_id = l.id ORDER BY h.id DESC LIMIT 1) AS status_since,
           COALESCE((SELECT json_agg(json_build_object('url', p.url, 'at', p.updated_at)) FROM listing_photos p WHERE p.listing_id = l.id), '[]') AS photos
    FROM listings l WHERE l.id = ${listingId}`;
  if (!row)
    return {
      publishedAt: null,
      indexStateAt: null,
      descriptionOptimizedAt: null,
      statusSince: null,
      photoTimes: new Map(),
    };
  return {
    publishedAt: row.published_at,
    indexStateAt: row.index_state_at,
    descriptionOptimizedAt: row.description_optimized_at,
    statusSince: row.status_since,
    photoTimes: new Map((row.photos as { url: string; at: string }[]).map((p) => [p.url, new Date(p.at)])),
  };
}
