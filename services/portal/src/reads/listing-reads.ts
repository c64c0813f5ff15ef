// The listings list (docs/portal.md, "Listings"): filters by status, processing state, warning code and broker,
// search by external ID (prefix) or title (words anywhere), newest write first, keyset-paged (a page never skips or
// repeats a listing while others change). Reads listing_report_summaries only: narrow rows, one index in list order.
import type postgres from "postgres";
import type { PortalScope } from "./scope.ts";

export const LISTINGS_PAGE = 50;

export interface ListingFilter {
  status?: string;
  state?: string;
  warning?: string;
  /** The broker's external ID. */
  broker?: string;
  q?: string;
  /** The last row of the previous page: "<updatedAt ISO>|<listingId>". */
  after?: string;
}

export interface ListingRow {
  listingId: string;
  externalId: string;
  title: string | null;
  status: string;
  state: string;
  score: number;
  warnings: string[];
  brokerExternalId: string;
  updatedAt: string;
}

export function parseAfter(raw: string | undefined): { at: string; id: string } | null {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)\|([1-9][0-9]{0,18})$/.exec(raw ?? "");
  return m?.[1] && m[2] ? { at: m[1], id: m[2] } : null;
}

/** LIKE pattern of the words as typed: %, _ and \ match themselves. */
const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

export async function readListings(
  sql: postgres.Sql,
  scope: PortalScope,
  filter: ListingFilter,
): Promise<{ rows: ListingRow[]; next: string | null }> {
  const after = parseAfter(filter.after);
  const q = filter.q?.trim();
  const rows = await sql`
    SELECT s.listing_id::text AS listing_id, s.external_id, s.title, s.status, s.state, s.score, s.warnings,
           b.external_id AS broker_external_id, to_char(s.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at
    FROM listing_report_summaries s JOIN brokers b ON b.id = s.broker_id
    WHERE s.partner_id = ${scope.partnerId}::uuid AND s.mode = ${scope.mode}
      ${filter.status ? sql`AND s.status = ${filter.status}` : sql``}
      ${filter.state ? sql`AND s.state = ${filter.state}` : sql``}
      ${filter.warning ? sql`AND s.warnings @> ARRAY[${filter.warning}]::text[]` : sql``}
      ${
        filter.broker
          ? sql`AND s.broker_id = (SELECT id FROM brokers WHERE partner_id = ${scope.partnerId}::uuid AND mode = ${scope.mode} AND external_id = ${filter.broker})`
          : sql``
      }
      ${q ? sql`AND (s.external_id LIKE ${`${likeEscape(q)}%`} OR s.title ILIKE ${`%${likeEscape(q)}%`})` : sql``}
      ${after ? sql`AND (s.updated_at, s.listing_id) < (${after.at}::timestamptz, ${after.id}::bigint)` : sql``}
    ORDER BY s.updated_at DESC, s.listing_id DESC
    LIMIT ${LISTINGS_PAGE + 1}`;
  const page = rows.slice(0, LISTINGS_PAGE).map(
    (r): ListingRow => ({
      listingId: r.listing_id,
      externalId: r.external_id,
      title: r.title,
      status: r.status,
      state: r.state,
      score: r.score,
      warnings: r.warnings,
      brokerExternalId: r.broker_external_id,
      updatedAt: r.updated_at,
    }),
  );
  const last = page.at(-1);
  return { rows: page, next: rows.length > LISTINGS_PAGE && last ? `${last.updatedAt}|${last.listingId}` : null };
}

/** How far back a write is looked for among those the report tracker has not summarized yet. */
export const RECENT_WRITES_MINUTES = 15;

/**
 * Listings written in the last RECENT_WRITES_MINUTES whose current version is not summarized yet (the tracker
 * follows within a second while it runs): read through the listings' (partner, mode, updated_at) index, so the
 * partner's older listings are never read.
 */
export async function recentlyUnsummarized(sql: postgres.Sql, scope: PortalScope): Promise<number> {
  const [row] = await sql`
    SELECT count(*)::int AS n FROM listings l
    WHERE l.partner_id = ${scope.partnerId}::uuid AND l.mode = ${scope.mode}
      AND l.updated_at > now() - ${RECENT_WRITES_MINUTES}::int * interval '1 minute'
      AND NOT EXISTS (SELECT 1 FROM listing_report_summaries s WHERE s.listing_id = l.id AND s.updated_at >= l.updated_at)`;
  return row?.n ?? 0;
}
