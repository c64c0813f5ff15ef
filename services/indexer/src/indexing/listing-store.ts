// PostgreSQL reads and guarded writes of the indexer. Writes never move a listing backwards: index state only
// for the listing's current version, the optimized description only for the description it was made from.
import {
  BUYER_VISIBLE_STATUSES,
  ListingPublished,
  ListingUnpublished,
  listingVisibilityFact,
  type ListingStatus,
  type RecordMode,
} from "@pss/contracts";
import {
  isoTimestamp,
  listingBrokerColumns,
  listingWithBroker,
  toListingBroker,
  toListingLocation,
} from "@pss/database/queries";
import { insertOutboxFacts, partnerFactRow, type EventTrace } from "@pss/service-kit";
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

function toState(row: postgres.Row): StoredListingState {
  const broker = toListingBroker(row);
  return {
    id: Number(row.id),
    version: row.version,
    mode: row.mode,
    description: row.description,
    descriptionOptimized: row.description_optimized,
    brokerId: broker.brokerId,
    brokerName: broker.brokerName,
    listedAt: broker.listedAt.toISOString(),
  };
}

export async function loadListingStates(sql: postgres.Sql, ids: number[]): Promise<Map<number, StoredListingState>> {
  if (ids.length === 0) return new Map();
  const rows = await sql`
    SELECT l.id, l.version, l.mode, l.description, l.description_optimized, ${listingBrokerColumns(sql)}
    FROM ${listingWithBroker(sql)}
    WHERE l.id = ANY(${ids}::bigint[])`;
  return new Map(rows.map((r) => [Number(r.id), toState(r)]));
}

export async function loadBrokerVersions(sql: postgres.Sql, ids: string[]): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows = await sql`SELECT id::text AS id, version FROM brokers WHERE id = ANY(${ids}::bigint[])`;
  return new Map(rows.map((r) => [r.id as string, r.version as number]));
}

// Every column a search document is built from, with the broker and when the listing went live (both shared with
// the buyers' pages: packages/database/src/queries). Timestamps as the API writes them into events (isoTimestamp).
const LISTING_COLUMNS = (sql: postgres.Sql) => sql`
  l.id, l.version, l.mode, l.status, l.business_type, l.title, l.description, l.description_optimized,
  ${isoTimestamp(sql, "l.established_at")} AS established_at, l.street_address1, l.city, l.state, l.postal_code, l.country,
  l.visibility, l.financials, l.financing, ${isoTimestamp(sql, "l.updated_at")} AS updated_at,
  ${listingBrokerColumns(sql)}`;

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
      location: toListingLocation(r),
      financials: r.financials,
      financing: r.financing,
      updatedAt: r.updated_at,
    },
  };
}

// The two reads below select listings in a buyer-visible status, of either mode: the candidates. What goes into
// the index is decided by publicIndexAction (public-index-rule.ts), which keeps test listings out.

/** The listings of some brokers in a buyer-visible status, as stored now (for re-indexing after a broker change). */
export async function loadVisibleListingsOfBrokers(
  sql: postgres.Sql,
  brokerIds: string[],
): Promise<{ source: ListingSource; state: StoredListingState }[]> {
  if (brokerIds.length === 0) return [];
  const rows = await sql`
    SELECT ${LISTING_COLUMNS(sql)}
    FROM ${listingWithBroker(sql)}
    WHERE l.broker_id = ANY(${brokerIds}::bigint[]) AND l.status = ANY(${visible})`;
  return rows.map(toSourceAndState);
}

/** One page of every listing in a buyer-visible status in id order, after `afterId` (a full re-index reads them all). */
export async function loadVisibleListingsPage(
  sql: postgres.Sql,
  afterId: number,
  limit: number,
): Promise<{ source: ListingSource; state: StoredListingState }[]> {
  const rows = await sql`
    SELECT ${LISTING_COLUMNS(sql)}
    FROM ${listingWithBroker(sql)}
    WHERE l.id > ${afterId} AND l.status = ANY(${visible})
    ORDER BY l.id LIMIT ${limit}`;
  return rows.map(toSourceAndState);
}

/** Listings (any status) as stored now, by id (the reconciler repairs these). */
export async function loadListingsByIds(
  sql: postgres.Sql,
  ids: number[],
): Promise<{ source: ListingSource; state: StoredListingState }[]> {
  if (ids.length === 0) return [];
  const rows = await sql`
    SELECT ${LISTING_COLUMNS(sql)}
    FROM ${listingWithBroker(sql)}
    WHERE l.id = ANY(${ids}::bigint[])
    ORDER BY l.id`;
  return rows.map(toSourceAndState);
}

/**
 * Listings (any status) that a transaction with an ID at or above `xmin` wrote, or whose broker it wrote: what may
 * have changed since a snapshot whose horizon was `xmin` (write_xid, migration 0006).
 */
export async function loadListingsWrittenSince(
  sql: postgres.Sql,
  xmin: string,
): Promise<{ source: ListingSource; state: StoredListingState }[]> {
  const rows = await sql`
    SELECT ${LISTING_COLUMNS(sql)}
    FROM ${listingWithBroker(sql)}
    WHERE l.write_xid >= ${xmin}::xid8 OR b.write_xid >= ${xmin}::xid8
    ORDER BY l.id`;
  return rows.map(toSourceAndState);
}

/** Stores rewrites, each only while the listing still has the description it was made from. */
export async function storeOptimizedDescriptions(
  sql: postgres.Sql,
  rewrites: { id: number; original: string; optimized: string }[],
): Promise<void> {
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
 * In the same transaction: `published_at` (indexed and so visible to buyers, or not), and when that changed, the
 * listing.published / listing.unpublished fact for webhooks (packages/service-kit/src/partner-events.ts).
 */
export async function recordIndexStates(
  sql: postgres.Sql,
  states: { id: number; version: number; state: "indexed" | "removed"; trace?: EventTrace }[],
): Promise<void> {
  if (states.length === 0) return;
  // One transaction, two statements: the facts are built in JS from the rows the UPDATE changed, and commit with it.
  await sql.begin(async (tx) => {
    const recorded = await tx<RecordedState[]>`
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
      SELECT r.*, b.external_id AS broker_external_id FROM recorded r JOIN brokers b ON b.id = r.broker_id
      WHERE (r.state = 'indexed' AND NOT r.published) OR (r.state = 'removed' AND r.published)
      ORDER BY r.id`;
    // Each fact continues the trace of the event that indexed (or removed) its listing.
    const traces = new Map(states.map((s) => [String(s.id), s.trace]));
    await insertOutboxFacts(
      tx,
      recorded.map((r) => ({ ...visibilityFact(r), trace: traces.get(String(r.id)) })),
    );
  });
}

type RecordedState = {
  id: string;
  partner_id: string;
  mode: RecordMode;
  external_id: string;
  broker_id: string;
  status: ListingStatus;
  version: number;
  state: "indexed" | "removed";
  published: boolean;
  broker_external_id: string;
};

/** listing.published (now indexed, was not published) or listing.unpublished (now removed, was published). */
function visibilityFact(r: RecordedState) {
  const fact = r.state === "indexed" ? ListingPublished : ListingUnpublished;
  return partnerFactRow(
    fact,
    { aggregateId: String(r.id), version: r.version, partnerId: r.partner_id, mode: r.mode },
    listingVisibilityFact(r, { id: r.broker_id, external_id: r.broker_external_id }),
  );
}
