// The writes of a batch's listing plans, set-based: one statement for all creates and one for all updates (each
// with the photos, status history and change history of the items it wrote, as data-modifying CTEs), then one
// for all their events and feed drafts (appendEvents). The rows written are those the single write (listing-writes.ts)
// writes for the same plan; only the statement count differs. Concurrency is the single write's too: creates
// use ON CONFLICT DO NOTHING, updates are guarded by the version read, and RETURNING names the items that won;
// the others lost a race and come back as null for the caller to run alone.
import type postgres from "postgres";
import { ListingUpserted, listingUpsertedPayload, type Quality } from "@pss/contracts";
import { sqlJson } from "@pss/service-kit";
import { appendEvents, outboxRow, type OutboxWrite } from "../outbox/outbox-writer.ts";
import { forHistory } from "../records/changes.ts";
import type { RecordScope } from "../records/record-scope.ts";
import type { ListingPlan, ListingUpsertResult, WriteSource } from "./listing-service.ts";
import { COLUMNS, originColumns, record, updateMany } from "./listing-batch-updates.ts";

type CreatePlan = Extract<ListingPlan, { kind: "create" }>;
type UpdatePlan = Extract<ListingPlan, { kind: "update" }>;

/** One item to write; a create carries the listing ID allocated for it (allocateListingIds). */
export interface PlannedWrite {
  externalId: string;
  plan: CreatePlan | UpdatePlan;
  quality: Quality;
  newListingId?: number;
  /** Who writes this item and its request's trace, when not the batch's (PUTs written together). */
  source?: WriteSource;
}

/** IDs for a batch's new listings, in one round trip (an ID a lost race leaves unused is a gap). */
export async function allocateListingIds(sql: postgres.Sql, count: number): Promise<number[]> {
  if (count === 0) return [];
  const rows = await sql`SELECT nextval('listings_id_seq') AS id FROM generate_series(1, ${count})`;
  return rows.map((r) => Number(r.id));
}

/** Per item, in order: the result, or null when it lost a race. Runs in the caller's transaction. */
export async function writeListingPlans(
  tx: postgres.TransactionSql,
  scope: RecordScope,
  writes: PlannedWrite[],
  source: WriteSource,
): Promise<(ListingUpsertResult | null)[]> {
  const at = new Date();
  const creates = writes.flatMap((w, k) => {
    if (w.plan.kind !== "create") return [];
    if (w.newListingId === undefined) throw new Error("a batch create needs an allocated listing ID");
    return [{ ...w, k, plan: w.plan, newListingId: w.newListingId }];
  });
  const updates = writes.flatMap((w, k) => (w.plan.kind === "update" ? [{ ...w, k, plan: w.plan }] : []));
  // Both sent at once (pipelined); the events follow once it is known which items won.
  const [created, updated] = await Promise.all([
    insertCreates(tx, scope, creates, source, at),
    updateMany(tx, updates, source, at),
  ]);

  const out = new Array<ListingUpsertResult | null>(writes.length).fill(null);
  const events: (OutboxWrite & { k: number })[] = [];
  const { partnerId, mode } = scope;
  for (const c of creates) {
    if (!created.has(c.newListingId)) continue;
    out[c.k] = { listingId: c.newListingId, created: true, changed: true, quality: c.quality };
    events.push({
      k: c.k,
      row: outboxRow(
        ListingUpserted,
        { aggregateId: String(c.newListingId), version: 1, partnerId, mode },
        listingUpsertedPayload({
          listingId: c.newListingId,
          externalId: c.externalId,
          brokerId: c.plan.brokerId,
          document: c.plan.document,
          createdAt: at,
          updatedAt: at,
        }),
        (c.source ?? source).trace,
      ),
      feed: { changes: c.plan.changes, statusFrom: null, statusTo: c.plan.document.status },
    });
  }
  for (const u of updates) {
    const { current, document } = u.plan;
    if (!updated.has(current.id)) continue;
    out[u.k] = { listingId: current.id, created: false, changed: true, quality: u.quality };
    const moved = current.document.status !== document.status;
    events.push({
      k: u.k,
      row: outboxRow(
        ListingUpserted,
        { aggregateId: String(current.id), version: current.version + 1, partnerId, mode },
        listingUpsertedPayload({
          listingId: current.id,
          externalId: u.externalId,
          brokerId: u.plan.brokerId,
          document,
          createdAt: current.createdAt,
          updatedAt: at,
        }),
        (u.source ?? source).trace,
      ),
      feed: {
        changes: u.plan.changes,
        statusFrom: moved ? current.document.status : null,
        statusTo: moved ? document.status : null,
      },
    });
  }
  events.sort((a, b) => a.k - b.k);
  await appendEvents(tx, events);
  return out;
}

/** Inserts the new listings with their photos, status and change history; the IDs of those inserted. */
async function insertCreates(
  tx: postgres.TransactionSql,
  scope: RecordScope,
  creates: { plan: CreatePlan; newListingId: number; externalId: string; source?: WriteSource }[],
  source: WriteSource,
  at: Date,
): Promise<Set<number>> {
  if (creates.length === 0) return new Set();
  const records = creates.map((c, n) => ({
    n,
    id: c.newListingId,
    external_id: c.externalId,
    changes: forHistory(c.plan.changes),
    ...originColumns(c.source ?? source),
    ...record(c.plan),
  }));
  const photos = creates.flatMap((c) =>
    (c.plan.document.photos ?? []).map((p) => ({ listing_id: c.newListingId, url: p.url, sort_key: p.sortKey })),
  );
  const rows = await tx`
    WITH r AS (
      SELECT * FROM jsonb_to_recordset(${sqlJson(tx, records)}::jsonb)
        AS r(n int, id bigint, external_id text, changes jsonb, key_id bigint, request_id text, ${tx.unsafe(COLUMNS)})
    ), l AS (
      INSERT INTO listings (id, partner_id, mode, external_id, broker_id, content_hash, status, business_type, title,
        description, established_at, street_address1, city, state, postal_code, country, visibility, financials,
        property, financing, created_at, updated_at)
      SELECT r.id, ${scope.partnerId}::uuid, ${scope.mode}::text, r.external_id, r.broker_id, decode(r.content_hash, 'hex'),
        r.status, r.business_type, r.title, r.description, r.established_at, r.street_address1, r.city, r.state,
        r.postal_code, r.country, r.visibility, r.financials, r.property, r.financing, ${at}::timestamptz, ${at}::timestamptz
      FROM r ORDER BY r.n
      ON CONFLICT (partner_id, mode, external_id) DO NOTHING
      RETURNING id
    ), p AS (
      INSERT INTO listing_photos (listing_id, url, sort_key)
      SELECT x.listing_id, x.url, x.sort_key
      FROM ROWS FROM (jsonb_to_recordset(${sqlJson(tx, photos)}::jsonb) AS (listing_id bigint, url text, sort_key int))
        WITH ORDINALITY AS x(listing_id, url, sort_key, n)
      JOIN l ON l.id = x.listing_id ORDER BY x.n
    ), h AS (
      INSERT INTO listing_status_history (listing_id, from_status, to_status)
      SELECT r.id, NULL, r.status FROM r JOIN l ON l.id = r.id ORDER BY r.n
    ), c AS (
      INSERT INTO listing_history (listing_id, version, key_id, request_id, changes, status_from, status_to)
      SELECT r.id, 1, r.key_id, r.request_id, r.changes, NULL, r.status FROM r JOIN l ON l.id = r.id ORDER BY r.n
    )
    SELECT id FROM l`;
  return new Set(rows.map((r) => Number(r.id)));
}
