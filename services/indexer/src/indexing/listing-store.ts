// PostgreSQL reads and guarded writes of the indexer. Writes never move a listing backwards: index state only
// for the listing's current version, the optimized description only for the description it was made from.
import { BUYER_VISIBLE_STATUSES, type RecordMode } from "@pss/contracts";
import { partnerEventOutboxColumns } from "@pss/service-kit";
import type postgres from "postgres";
import type { ListingContext, ListingSource } from "../search-index/search-document.ts";

export interface StoredListingState extends ListingContext {
  id: number;
  version: number;
  /** Test listings (docs/sandbox.md) are never written to the public index. */
  mode: RecordMode;
  description: string | null;
  descriptionOptimized: string | null;
}

const visible = [...BUYER_VISIBLE_STATUSES];

// When the listing last went live: the latest move from a hidden status (or creation) into a visible one.
const LISTED_AT = (sql: postgres.Sql) => sql`
  COALESCE((SELECT max(h.changed_at) FROM listing_status_history h
            WHERE h.listing_id = l.id AND h.to_status = ANY(${visible})
              AND (h.from_status IS NULL OR NOT h.from_status = ANY(${visible}))), l.created_at)`;

function toState(row: postgres.Row): StoredListingState {
  return {
    id: Number(row.id),
    version: row.version,
    mode: row.mode,
    description: row.description,
    descriptionOptimized: row.description_optimized,
    brokerId: row.broker_id,
    brokerName: row.broker_name,
    listedAt: new Date(row.listed_at).toISOString(),
  };
}

export async function loadListingStates(sql: postgres.Sql, ids: number[]): Promise<Map<number, StoredListingState>> {
  if (ids.length === 0) return new Map();
  const rows = await sql`
    SELECT l.id, l.version, l.mode, l.description, l.description_optimized, b.id::text AS broker_id, b.name AS broker_name, ${LISTED_AT(sql)} AS listed_at
    FROM listings l JOIN brokers b ON b.id = l.broker_id
    WHERE l.id = ANY(${ids}::bigint[])`;
  return new Map(rows.map((r) => [Number(r.id), toState(r)]));
}

export async function loadBrokerVersions(sql: postgres.Sql, ids: string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows = await sql`SELECT id::text AS id, version FROM brokers WHERE id = ANY(${ids}::bigint[])`;
  return new Map(rows.map((r) => [r.id as string, r.version as number]));
}

// ISO 8601 in UTC, as the API writes it into events, made by PostgreSQL: the driver's Date parsing gives
// Invalid Date for some early years (e.g. 0018) that partners may send.
const ISO = (sql: postgres.Sql, column: string) => sql`to_char(${sql.unsafe(column)} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

// Every column a search document is built from, with the broker and when the listing went live.
const LISTING_COLUMNS = (sql: postgres.Sql) => sql`
  l.id, l.version, l.mode, l.status, l.business_type, l.title, l.description, l.description_optimized,
  ${ISO(sql, "l.established_at")} AS established_at, l.street_address1, l.city, l.state, l.postal_code, l.country,
  l.visibility, l.financials, l.financing, ${ISO(sql, "l.updated_at")} AS updated_at,
  b.id::text AS broker_id, b.name AS broker_name, ${LISTED_AT(sql)} AS listed_at`;

function toSourceAndState(r: postgres.Row): { source: ListingSource; state: StoredListingState } {
  return {
    state: toState(r),
    source: {
      id: Number(r.id),
      version: r.version,
      status: r.status,
      businessType: r.business_type,
      title: r.title,
      description: r.description,
      establishedAt: r.established_at,
      location: { streetAddress1: r.street_address1, city: r.city, state: r.state, postalCode: r.postal_code, country: r.country, visibility: r.visibility },
      financials: r.financials,
      financing: r.financing,
      updatedAt: r.updated_at,
    },
  };
}

// The two reads below select listings in a buyer-visible status, of either mode: the candidates. What goes into
// the index is decided by publicIndexAction (public-index-rule.ts), which keeps test listings out.

/** The listings of some brokers in a buyer-visible status, as stored now (for re-indexing after a broker change). */
export async function loadVisibleListingsOfBrokers(sql: postgres.Sql, brokerIds: string[]): Promise<{ source: ListingSource; state: StoredListingState }[]> {
  if (brokerIds.length === 0) return [];
  const rows = await sql`
    SELECT ${LISTING_COLUMNS(sql)}
    FROM listings l JOIN brokers b ON b.id = l.broker_id
    WHERE l.broker_id = ANY(${brokerIds}::bigint[]) AND l.status = ANY(${visible})`;
  return rows.map(toSourceAndState);
}

/** One page of every listing in a buyer-visible status in id order, after `afterId` (a full re-index reads them all). */
export async function loadVisibleListingsPage(sql: postgres.Sql, afterId: number, limit: number): Promise<{ source: ListingSource; state: StoredListingState }[]> {
  const rows = await sql`
    SELECT ${LISTING_COLUMNS(sql)}
    FROM listings l JOIN brokers b ON b.id = l.broker_id
    WHERE l.id > ${afterId} AND l.status = ANY(${visible})
    ORDER BY l.id LIMIT ${limit}`;
  return rows.map(toSourceAndState);
}

/** Listings (any status) as stored now, by id (the reconciler repairs these). */
export async function loadListingsByIds(sql: postgres.Sql, ids: number[]): Promise<{ source: ListingSource; state: StoredListingState }[]> {
  if (ids.length === 0) return [];
  const rows = await sql`
    SELECT ${LISTING_COLUMNS(sql)}
    FROM listings l JOIN brokers b ON b.id = l.broker_id
    WHERE l.id = ANY(${ids}::bigint[])
    ORDER BY l.id`;
  return rows.map(toSourceAndState);
}

/**
 * Listings (any status) that a transaction with an ID at or above `xmin` wrote, or whose broker it wrote: what may
 * have changed since a snapshot whose horizon was `xmin` (write_xid, migration 0006).
 */
export async function loadListingsWrittenSince(sql: postgres.Sql, xmin: string): Promise<{ source: ListingSource; state: StoredListingState }[]> {
  const rows = await sql`
    SELECT ${LISTING_COLUMNS(sql)}
    FROM listings l JOIN brokers b ON b.id = l.broker_id
    WHERE l.write_xid >= ${xmin}::xid8 OR b.write_xid >= ${xmin}::xid8
    ORDER BY l.id`;
  return rows.map(toSourceAndState);
}

/** Stores rewrites, each only while the listing still has the description it was made from. */
export async function storeOptimizedDescriptions(sql: postgres.Sql, rewrites: { id: number; original: string; optimized: string }[]): Promise<void> {
  if (rewrites.length === 0) return;
  await sql`
    UPDATE listings l SET description_optimized = u.optimized
    FROM (SELECT unnest(${rewrites.map((r) => r.id)}::bigint[]) AS id, unnest(${rewrites.map((r) => r.original)}::text[]) AS original,
                 unnest(${rewrites.map((r) => r.optimized)}::text[]) AS optimized) u
    WHERE l.id = u.id AND l.description = u.original AND l.description_optimized IS DISTINCT FROM u.optimized`;
}

/**
 * Records what the index holds for the partner read-back. Applied only when the version is the listing's
 * current one and not older than what was recorded; otherwise the state stays 'pending' for the newer event.
 * In the same statement: `published_at` (indexed and so visible to buyers, or not), and when that changed, the
 * listing.published / listing.unpublished fact for webhooks (packages/service-kit/src/partner-events.ts).
 */
export async function recordIndexStates(sql: postgres.Sql, states: { id: number; version: number; state: "indexed" | "removed" }[]): Promise<void> {
  if (states.length === 0) return;
  await sql`
    WITH u AS (
      SELECT unnest(${states.map((s) => s.id)}::bigint[]) AS id, unnest(${states.map((s) => s.version)}::int[]) AS version,
             unnest(${states.map((s) => s.state)}::text[]) AS state
    ), recorded AS (
      UPDATE listings l SET index_state = u.state, indexed_version = u.version,
        published_at = CASE WHEN u.state = 'indexed' THEN COALESCE(l.published_at, now()) END
      FROM u, (SELECT id, published_at IS NOT NULL AS published FROM listings WHERE id = ANY(${states.map((s) => s.id)}::bigint[])) before
      WHERE l.id = u.id AND before.id = u.id AND l.version = u.version AND (l.indexed_version IS NULL OR l.indexed_version <= u.version)
        AND (l.index_state <> u.state OR l.indexed_version IS DISTINCT FROM u.version)
      RETURNING l.id, l.partner_id, l.mode, l.external_id, l.broker_id, l.status, l.version, u.state, before.published
    )
    INSERT INTO outbox (topic, message_key, payload)
    SELECT ${partnerEventFact(sql, "listing.published")} FROM recorded r JOIN brokers b ON b.id = r.broker_id
    WHERE r.state = 'indexed' AND NOT r.published
    UNION ALL
    SELECT ${partnerEventFact(sql, "listing.unpublished")} FROM recorded r JOIN brokers b ON b.id = r.broker_id
    WHERE r.state = 'removed' AND r.published`;
}

/** The listing's fact as an outbox row, from `recorded r` joined with its broker `b`. */
function partnerEventFact(sql: postgres.Sql, type: "listing.published" | "listing.unpublished") {
  return partnerEventOutboxColumns(sql, type, {
    aggregateId: sql`r.id`,
    version: sql`r.version`,
    partnerId: sql`r.partner_id`,
    mode: sql`r.mode`,
    payload: sql`jsonb_build_object('externalListingId', r.external_id, 'serviceListingId', r.id, 'externalBrokerId', b.external_id,
      'serviceBrokerId', b.id::text, 'status', r.status, 'version', r.version)`,
  });
}
