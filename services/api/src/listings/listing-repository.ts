// SQL for listings, their photos and status history. Functions take the transaction they run in.
import type postgres from "postgres";
import type { PagePosition, PageRequest } from "../http/pagination.ts";
import type { RecordMode } from "@pss/contracts";
import { readCommitSafePage } from "../records/commit-safe-page.ts";
import type { RecordScope } from "../records/record-scope.ts";
import type { ListingDocument } from "./listing-document.ts";

type Tx = postgres.TransactionSql | postgres.Sql;

export interface StoredPhoto {
  url: string;
  sortKey: number;
  state: "pending" | "ready" | "failed";
  failureReason: string | null;
  warning: string | null;
  width: number | null;
  height: number | null;
  variants: unknown[] | null;
}

export interface StoredListing {
  id: number;
  partnerId: string;
  mode: RecordMode;
  externalId: string;
  brokerId: string;
  brokerExternalId: string;
  /** The broker's phone: the quality rules ask for it on an UNDER_CONTRACT listing. */
  brokerPhone: string | null;
  version: number;
  contentHash: Buffer;
  document: ListingDocument;
  descriptionOptimized: string | null;
  indexState: "pending" | "indexed" | "removed";
  photos: StoredPhoto[];
  createdAt: Date;
  updatedAt: Date;
}

const SELECT = (tx: Tx) => tx`
  SELECT l.id, l.partner_id, l.mode, l.external_id, l.broker_id::text AS broker_id, b.external_id AS broker_external_id, b.phone AS broker_phone, l.version, l.content_hash,
         l.status, l.business_type, l.title, l.description, l.description_optimized, l.established_at, l.street_address1, l.city, l.state,
         l.postal_code, l.country, l.visibility, l.financials, l.property, l.financing, l.index_state, l.created_at, l.updated_at,
         l.write_xid::text AS write_xid,
         COALESCE((SELECT json_agg(json_build_object('url', p.url, 'sortKey', p.sort_key, 'state', p.state, 'failureReason', p.failure_reason,
                     'warning', p.warning, 'width', p.width, 'height', p.height, 'variants', p.variants) ORDER BY p.sort_key, p.id)
                   FROM listing_photos p WHERE p.listing_id = l.id), '[]') AS photos
  FROM listings l JOIN brokers b ON b.id = l.broker_id`;

function toStored(row: postgres.Row): StoredListing {
  const location: ListingDocument["location"] = {
    city: row.city,
    state: row.state,
    country: row.country,
    visibility: row.visibility,
  };
  if (row.street_address1 !== null) location.streetAddress1 = row.street_address1;
  if (row.postal_code !== null) location.postalCode = row.postal_code;
  const document: ListingDocument = { status: row.status, businessType: row.business_type, location };
  if (row.title !== null) document.title = row.title;
  if (row.description !== null) document.description = row.description;
  if (row.established_at !== null) document.establishedAt = row.established_at.toISOString();
  if (row.financials !== null) document.financials = row.financials;
  if (row.property !== null) document.property = row.property;
  if (row.financing !== null) document.financing = row.financing;
  const photos: StoredPhoto[] = row.photos;
  if (photos.length > 0) document.photos = photos.map((p) => ({ url: p.url, sortKey: p.sortKey }));
  return {
    id: Number(row.id),
    partnerId: row.partner_id,
    mode: row.mode,
    externalId: row.external_id,
    brokerId: row.broker_id,
    brokerExternalId: row.broker_external_id,
    brokerPhone: row.broker_phone ?? null,
    version: row.version,
    contentHash: row.content_hash,
    document,
    descriptionOptimized: row.description_optimized,
    indexState: row.index_state,
    photos,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * One round trip for an optimistic write: the listing as stored (or nothing) and the ID of the broker the body
 * names (undefined when it names none, null when that broker does not exist for this partner). With `allocateId`
 * (a write, not a dry run), when the listing does not exist, also a new listing ID from the sequence (its create's event carries it; an ID a lost race
 * leaves unused is a gap, as a conflicting INSERT's would be).
 */
export async function loadForWrite(
  tx: Tx,
  scope: RecordScope,
  externalId: string,
  brokerExternalId: string | undefined,
  opts: { allocateId?: boolean } = {},
): Promise<{
  listing: StoredListing | null;
  namedBrokerId: string | null | undefined;
  namedBrokerPhone: string | null;
  newListingId?: number;
}> {
  const rows = await tx`
    SELECT nb.id::text AS named_broker_id, nb.phone AS named_broker_phone,
      CASE WHEN x.id IS NULL AND ${opts.allocateId === true} THEN nextval('listings_id_seq') END AS new_listing_id, x.*
    FROM (SELECT 1) AS one
    LEFT JOIN brokers nb ON nb.partner_id = ${scope.partnerId} AND nb.mode = ${scope.mode} AND nb.external_id = ${brokerExternalId ?? null}
    LEFT JOIN LATERAL (${SELECT(tx)} WHERE l.partner_id = ${scope.partnerId} AND l.mode = ${scope.mode} AND l.external_id = ${externalId}) x ON true`;
  const row = rows[0]!;
  return {
    listing: row.id === null ? null : toStored(row),
    namedBrokerId: brokerExternalId === undefined ? undefined : (row.named_broker_id as string | null),
    namedBrokerPhone: (row.named_broker_phone as string | null) ?? null,
    newListingId: row.new_listing_id === null ? undefined : Number(row.new_listing_id),
  };
}

/**
 * loadForWrite for many listings at once (a batch): two reads whatever the count, the listings as stored by
 * external ID and the IDs (and phones, for the quality warnings) of the brokers named, by external ID (absent
 * from the map: no such broker).
 */
export async function loadManyForWrite(
  tx: Tx,
  scope: RecordScope,
  externalIds: string[],
  brokerExternalIds: string[],
): Promise<{ listings: Map<string, StoredListing>; brokers: Map<string, { id: string; phone: string | null }> }> {
  const [rows, brokers] = await Promise.all([
    externalIds.length
      ? tx`${SELECT(tx)} WHERE l.partner_id = ${scope.partnerId} AND l.mode = ${scope.mode} AND l.external_id = ANY(${externalIds}::text[])`
      : Promise.resolve([]),
    brokerExternalIds.length
      ? tx`SELECT id::text AS id, external_id, phone FROM brokers WHERE partner_id = ${scope.partnerId} AND mode = ${scope.mode} AND external_id = ANY(${brokerExternalIds}::text[])`
      : Promise.resolve([]),
  ]);
  return {
    listings: new Map(rows.map((r) => [r.external_id as string, toStored(r)])),
    brokers: new Map(
      brokers.map((r) => [r.external_id as string, { id: r.id as string, phone: (r.phone as string | null) ?? null }]),
    ),
  };
}

export async function findListing(tx: Tx, scope: RecordScope, externalId: string): Promise<StoredListing | null> {
  const rows =
    await tx`${SELECT(tx)} WHERE l.partner_id = ${scope.partnerId} AND l.mode = ${scope.mode} AND l.external_id = ${externalId}`;
  return rows[0] ? toStored(rows[0]) : null;
}

export type StatusChange = { from: string | null; to: string; changedAt: string };

export async function statusHistories(tx: Tx, listingIds: number[]): Promise<Map<number, StatusChange[]>> {
  const out = new Map<number, StatusChange[]>(listingIds.map((id) => [id, []]));
  if (listingIds.length === 0) return out;
  const rows =
    await tx`SELECT listing_id, from_status, to_status, changed_at FROM listing_status_history WHERE listing_id = ANY(${listingIds}) ORDER BY id`;
  for (const r of rows)
    out
      .get(Number(r.listing_id))!
      .push({ from: r.from_status, to: r.to_status, changedAt: r.changed_at.toISOString() });
  return out;
}

export type PageArgs = PageRequest & { scope: RecordScope };

/** One page of the commit-safe reconciliation order (records/commit-safe-page.ts). */
export async function pageListings(
  tx: Tx,
  args: PageArgs,
): Promise<{ rows: StoredListing[]; nextCursor: string | null }> {
  const { scope, ...page } = args;
  return readCommitSafePage(tx, {
    table: "listings",
    scope,
    page,
    async fetch(after: PagePosition, limit: number, updatedSince: Date | null) {
      const rows = await tx`${SELECT(tx)}
        WHERE l.partner_id = ${scope.partnerId} AND l.mode = ${scope.mode}
          AND (l.write_xid, l.id) > (${after.xid}::xid8, ${after.id}::bigint)
          ${updatedSince ? tx`AND l.updated_at >= ${updatedSince}` : tx``}
        ORDER BY l.write_xid, l.id LIMIT ${limit}`;
      return rows.map((r) => ({ row: toStored(r), position: { xid: r.write_xid as string, id: String(r.id) } }));
    },
  });
}
