// Listing writes as single statements: the row, its photos, its status history, its change history, its outbox
// event and that event's change-feed drafts (feed-drafts.ts) change together in one atomic statement
// (data-modifying CTEs), so the common path needs no explicit transaction and only two round trips (read, write). The listing.upserted event is built in JS from the event
// catalog (listingUpsertedPayload): a new listing's ID comes from the read (loadForWrite allocates one when the
// listing does not exist yet) and the timestamps are set here, so SQL only stores the event. Concurrency: creates
// use ON CONFLICT DO NOTHING, updates are guarded by the version that was read; the caller retries on a lost race.
import type postgres from "postgres";
import { ListingUpserted, listingUpsertedPayload, type FieldChange } from "@pss/contracts";
import type { ListingDocument } from "./listing-document.ts";
import type { StoredPhoto } from "./listing-repository.ts";
import { feedDraftsInsert, sqlJson, sqlValues, type EventTrace, feedDraftsOf, outboxRow } from "@pss/service-kit";
import type { RecordScope, WriteOrigin } from "../records/record-scope.ts";

/** The change history row written with the version (changes already truncated for history). */
export interface HistoryRecord {
  origin: WriteOrigin;
  changes: FieldChange[];
}

type Sql = postgres.Sql | postgres.TransactionSql;

/** A new listing's ID, when the read did not allocate one (a listing written with its inline broker). */
export async function allocateListingId(sql: Sql): Promise<number> {
  const [row] = await sql`SELECT nextval('listings_id_seq') AS id`;
  return Number(row!.id);
}

/** A document's listing columns, JSON values as they are (the single write wraps them, a batch sends them as JSON). */
export function documentColumns(doc: ListingDocument) {
  return {
    status: doc.status,
    business_type: doc.businessType,
    title: doc.title ?? null,
    description: doc.description ?? null,
    established_at: doc.establishedAt ? new Date(doc.establishedAt) : null,
    street_address1: doc.location.streetAddress1 ?? null,
    city: doc.location.city,
    state: doc.location.state,
    postal_code: doc.location.postalCode ?? null,
    country: doc.location.country,
    visibility: doc.location.visibility,
    financials: doc.financials ?? null,
    property: doc.property ?? null,
    financing: doc.financing ?? null,
  };
}

function columns(sql: Sql, doc: ListingDocument) {
  const c = documentColumns(doc);
  const json = (v: unknown) => (v ? sqlJson(sql, v) : null);
  return { ...c, financials: json(c.financials), property: json(c.property), financing: json(c.financing) };
}

export async function createListingAtomically(
  sql: Sql,
  args: {
    id?: number;
    scope: RecordScope;
    externalId: string;
    brokerId: string;
    document: ListingDocument;
    hash: Buffer;
    history: HistoryRecord;
    trace?: EventTrace;
  },
): Promise<{ id: number } | null> {
  const id = args.id ?? (await allocateListingId(sql));
  const at = new Date();
  const photos = args.document.photos ?? [];
  const { partnerId, mode } = args.scope;
  const { origin, changes } = args.history;
  const event = outboxRow(
    ListingUpserted,
    { aggregateId: String(id), version: 1, partnerId, mode },
    listingUpsertedPayload({
      listingId: id,
      externalId: args.externalId,
      brokerId: args.brokerId,
      document: args.document,
      createdAt: at,
      updatedAt: at,
    }),
    args.trace,
  );
  const row = {
    id,
    partner_id: partnerId,
    mode,
    external_id: args.externalId,
    broker_id: args.brokerId,
    content_hash: args.hash,
    ...columns(sql, args.document),
    created_at: at,
    updated_at: at,
  };
  const [created] = await sql`
    WITH l AS (
      INSERT INTO listings ${sqlValues(sql, row)}
      ON CONFLICT (partner_id, mode, external_id) DO NOTHING
      RETURNING id, created_at
    ), p AS (
      INSERT INTO listing_photos (listing_id, url, sort_key)
      SELECT l.id, x.url, x.sort_key FROM l, unnest(${photos.map((p) => p.url)}::text[], ${photos.map((p) => p.sortKey)}::int[]) AS x(url, sort_key)
    ), h AS (
      INSERT INTO listing_status_history (listing_id, from_status, to_status) SELECT l.id, NULL, ${args.document.status} FROM l
    ), c AS (
      INSERT INTO listing_history (listing_id, version, key_id, request_id, changes, status_from, status_to)
      SELECT l.id, 1, ${origin.keyId}::bigint, ${origin.requestId}::text, ${sqlJson(sql, changes)}::jsonb, NULL, ${args.document.status}::text FROM l
    ), o AS (
      INSERT INTO outbox (topic, message_key, request_id, traceparent, payload, feed_pending)
      SELECT ${event.topic}, ${event.message_key}, ${event.request_id}, ${event.traceparent}, ${sqlJson(sql, event.envelope)}::jsonb, NULL FROM l
      RETURNING id, 1 AS event
    ), f AS (
      ${feedDraftsInsert(sql, feedDraftsOf([{ row: event, feed: { changes, statusFrom: null, statusTo: args.document.status } }]), "o")}
    )
    SELECT id FROM l`;
  return created ? { id: Number(created.id) } : null;
}

export async function updateListingAtomically(
  sql: Sql,
  args: {
    id: number;
    expectedVersion: number;
    scope: RecordScope;
    externalId: string;
    brokerId: string;
    previous: { document: ListingDocument; photos: StoredPhoto[]; createdAt: Date };
    document: ListingDocument;
    hash: Buffer;
    history: HistoryRecord;
    trace?: EventTrace;
  },
): Promise<boolean> {
  const wanted = args.document.photos ?? [];
  const before = new Map(args.previous.photos.map((p) => [p.url, p.sortKey]));
  const wantedUrls = new Set(wanted.map((p) => p.url));
  const gone = args.previous.photos.filter((p) => !wantedUrls.has(p.url)).map((p) => p.url);
  const moved = wanted.filter((p) => before.has(p.url) && before.get(p.url) !== p.sortKey);
  const added = wanted.filter((p) => !before.has(p.url));
  const c = columns(sql, args.document);
  const descriptionChanged = (args.previous.document.description ?? null) !== c.description;
  const statusChanged = args.previous.document.status !== args.document.status;
  const statusFrom = statusChanged ? args.previous.document.status : null;
  const statusTo = statusChanged ? args.document.status : null;
  const { partnerId, mode } = args.scope;
  const { origin, changes } = args.history;
  const at = new Date();
  const event = outboxRow(
    ListingUpserted,
    { aggregateId: String(args.id), version: args.expectedVersion + 1, partnerId, mode },
    listingUpsertedPayload({
      listingId: args.id,
      externalId: args.externalId,
      brokerId: args.brokerId,
      document: args.document,
      createdAt: args.previous.createdAt,
      updatedAt: at,
    }),
    args.trace,
  );

  // Only the parts this change needs: most updates touch neither photos nor status.
  const parts = [
    sql`u AS (
      UPDATE listings SET ${sqlValues(sql, { ...c, broker_id: args.brokerId, content_hash: args.hash })},
        ${descriptionChanged ? sql`description_optimized = NULL,` : sql``}
        version = version + 1, updated_at = ${at}, index_state = 'pending'
      WHERE id = ${args.id} AND version = ${args.expectedVersion}
      RETURNING id, version, created_at, updated_at
    )`,
    sql`o AS (
      INSERT INTO outbox (topic, message_key, request_id, traceparent, payload, feed_pending)
      SELECT ${event.topic}, ${event.message_key}, ${event.request_id}, ${event.traceparent}, ${sqlJson(sql, event.envelope)}::jsonb, NULL FROM u
      RETURNING id, 1 AS event
    )`,
    // Its feed events, numbered later by the sequencer without reading the outbox row (feed-drafts.ts).
    sql`f AS (${feedDraftsInsert(sql, feedDraftsOf([{ row: event, feed: { changes, statusFrom, statusTo } }]), "o")})`,
    sql`c AS (
      INSERT INTO listing_history (listing_id, version, key_id, request_id, changes, status_from, status_to)
      SELECT u.id, u.version, ${origin.keyId}::bigint, ${origin.requestId}::text, ${sqlJson(sql, changes)}::jsonb,
        ${statusFrom}::text, ${statusTo}::text
      FROM u
    )`,
  ];
  if (gone.length)
    parts.push(
      sql`d AS (DELETE FROM listing_photos WHERE listing_id IN (SELECT id FROM u) AND url = ANY(${gone}::text[]))`,
    );
  if (moved.length) {
    parts.push(sql`m AS (
      UPDATE listing_photos p SET sort_key = x.sort_key
      FROM u, unnest(${moved.map((p) => p.url)}::text[], ${moved.map((p) => p.sortKey)}::int[]) AS x(url, sort_key)
      WHERE p.listing_id = u.id AND p.url = x.url
    )`);
  }
  if (added.length) {
    parts.push(sql`a AS (
      INSERT INTO listing_photos (listing_id, url, sort_key)
      SELECT u.id, x.url, x.sort_key FROM u, unnest(${added.map((p) => p.url)}::text[], ${added.map((p) => p.sortKey)}::int[]) AS x(url, sort_key)
    )`);
  }
  if (statusChanged) {
    parts.push(sql`h AS (
      INSERT INTO listing_status_history (listing_id, from_status, to_status)
      SELECT u.id, ${args.previous.document.status}, ${args.document.status} FROM u
    )`);
  }
  const ctes = parts.slice(1).reduce((list, part) => sql`${list}, ${part}`, parts[0]!);
  const [updated] = await sql`WITH ${ctes} SELECT version FROM u`;
  return updated !== undefined;
}
