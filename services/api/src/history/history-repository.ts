// Reads of the change history (written with each version by the listing and broker writes). Newest first, paged
// by the history row ID; the record is looked up in the caller's scope, so another mode's or partner's record
// is simply not found.
import type { BrokerHistoryEntry, ListingHistoryEntry } from "@pss/contracts";
import { isoTimestamp } from "@pss/database/queries";
import type postgres from "postgres";
import { encodeHistoryCursor, type HistoryPageRequest } from "../http/pagination.ts";
import type { RecordScope } from "../records/record-scope.ts";

export interface HistoryPage<T> {
  results: T[];
  nextCursor: string | null;
}

/** null when the listing does not exist in this scope. */
export async function listingHistory(
  sql: postgres.Sql,
  scope: RecordScope,
  externalId: string,
  page: HistoryPageRequest,
): Promise<HistoryPage<ListingHistoryEntry> | null> {
  const rows = await sql`
    SELECT x.id AS listing_id, h.id::text AS history_id, h.version, ${isoTimestamp(sql, "h.changed_at")} AS changed_at, h.key_id::text AS key_id,
           h.request_id, h.changes, h.status_from, h.status_to
    FROM (SELECT id FROM listings WHERE partner_id = ${scope.partnerId} AND mode = ${scope.mode} AND external_id = ${externalId}) x
    LEFT JOIN LATERAL (
      SELECT * FROM listing_history h WHERE h.listing_id = x.id ${page.beforeId ? sql`AND h.id < ${page.beforeId}::bigint` : sql``}
      ORDER BY h.id DESC LIMIT ${page.limit + 1}
    ) h ON true`;
  if (rows.length === 0) return null;
  const entries = rows.filter((r) => r.history_id !== null);
  return toPage(entries, page.limit, (r) => ({
    ...common(r),
    statusChange: r.status_to === null ? null : { from: r.status_from, to: r.status_to },
  }));
}

/** null when the broker does not exist in this scope. */
export async function brokerHistory(
  sql: postgres.Sql,
  scope: RecordScope,
  externalId: string,
  page: HistoryPageRequest,
): Promise<HistoryPage<BrokerHistoryEntry> | null> {
  const rows = await sql`
    SELECT x.id AS broker_id, h.id::text AS history_id, h.version, ${isoTimestamp(sql, "h.changed_at")} AS changed_at, h.key_id::text AS key_id,
           h.request_id, h.changes
    FROM (SELECT id FROM brokers WHERE partner_id = ${scope.partnerId} AND mode = ${scope.mode} AND external_id = ${externalId}) x
    LEFT JOIN LATERAL (
      SELECT * FROM broker_history h WHERE h.broker_id = x.id ${page.beforeId ? sql`AND h.id < ${page.beforeId}::bigint` : sql``}
      ORDER BY h.id DESC LIMIT ${page.limit + 1}
    ) h ON true`;
  if (rows.length === 0) return null;
  return toPage(
    rows.filter((r) => r.history_id !== null),
    page.limit,
    common,
  );
}

function common(r: postgres.Row): BrokerHistoryEntry {
  return {
    version: r.version,
    changedAt: r.changed_at,
    keyId: r.key_id,
    requestId: r.request_id,
    created: r.version === 1,
    changes: r.changes,
  };
}

function toPage<T>(rows: postgres.Row[], limit: number, map: (r: postgres.Row) => T): HistoryPage<T> {
  const page = rows.slice(0, limit);
  return {
    results: page.map(map),
    nextCursor: rows.length > limit ? encodeHistoryCursor(page.at(-1)!.history_id) : null,
  };
}
