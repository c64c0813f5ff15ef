// The version-guarded update of many listings as one statement (UPDATE … FROM a recordset), with the photo
// changes, status history and change history of exactly the rows it updated. What each item changes is what
// updateListingAtomically (listing-writes.ts) changes for the same plan.
import type postgres from "postgres";
import { sqlJson } from "@pss/service-kit";
import { forHistory } from "../records/changes.ts";
import type { ListingPlan, WriteSource } from "./listing-service.ts";
import { documentColumns } from "./listing-writes.ts";

type WritePlan = Extract<ListingPlan, { kind: "create" | "update" }>;
type UpdatePlan = Extract<ListingPlan, { kind: "update" }>;

/** The listing columns of a plan as a recordset row (COLUMNS names and types them). */
export function record(plan: WritePlan) {
  const c = documentColumns(plan.document);
  return {
    ...c,
    established_at: c.established_at?.toISOString() ?? null,
    broker_id: plan.brokerId,
    content_hash: plan.hash.toString("hex"),
  };
}

/** The change history's origin columns of one item's recordset row (key_id bigint, request_id text). */
export function originColumns(source: WriteSource) {
  return { key_id: source.origin.keyId, request_id: source.origin.requestId };
}

/** The column definition list of record()'s rows in jsonb_to_recordset, for both the create and the update. */
export const COLUMNS = `broker_id bigint, content_hash text, status text, business_type text, title text, description text,
  established_at timestamptz, street_address1 text, city text, state text, postal_code text, country text,
  visibility text, financials jsonb, property jsonb, financing jsonb`;

type PhotoRow = { listing_id: number; url: string; sort_key: number };

/** The photo rows to delete, re-sort and add, as the single update computes them. */
function photoChanges(plan: UpdatePlan, out: { gone: PhotoRow[]; moved: PhotoRow[]; added: PhotoRow[] }) {
  const id = plan.current.id;
  const wanted = plan.document.photos ?? [];
  const before = new Map(plan.current.photos.map((p) => [p.url, p.sortKey]));
  const wantedUrls = new Set(wanted.map((p) => p.url));
  for (const p of plan.current.photos)
    if (!wantedUrls.has(p.url)) out.gone.push({ listing_id: id, url: p.url, sort_key: p.sortKey });
  for (const p of wanted) {
    const row = { listing_id: id, url: p.url, sort_key: p.sortKey };
    if (!before.has(p.url)) out.added.push(row);
    else if (before.get(p.url) !== p.sortKey) out.moved.push(row);
  }
}

/** Updates the listings still at the version read; the IDs of those updated (the others lost a race). */
export async function updateMany(
  tx: postgres.TransactionSql,
  updates: { plan: UpdatePlan; source?: WriteSource }[],
  source: WriteSource,
  at: Date,
): Promise<Set<number>> {
  if (updates.length === 0) return new Set();
  const photos = { gone: [] as PhotoRow[], moved: [] as PhotoRow[], added: [] as PhotoRow[] };
  const records = updates.map(({ plan, source: own }, n) => {
    photoChanges(plan, photos);
    const before = plan.current.document;
    const moved = before.status !== plan.document.status;
    return {
      n,
      id: plan.current.id,
      expected_version: plan.current.version,
      description_changed: (before.description ?? null) !== (plan.document.description ?? null),
      status_from: moved ? before.status : null,
      status_to: moved ? plan.document.status : null,
      changes: forHistory(plan.changes),
      ...originColumns(own ?? source),
      ...record(plan),
    };
  });
  const set = (rows: PhotoRow[]) =>
    tx`ROWS FROM (jsonb_to_recordset(${sqlJson(tx, rows)}::jsonb) AS (listing_id bigint, url text, sort_key int))`;
  const rows = await tx`
    WITH r AS (
      SELECT * FROM jsonb_to_recordset(${sqlJson(tx, records)}::jsonb) AS r(n int, id bigint, expected_version int,
        description_changed boolean, status_from text, status_to text, changes jsonb, key_id bigint, request_id text,
        ${tx.unsafe(COLUMNS)})
    ), u AS (
      UPDATE listings l SET broker_id = r.broker_id, content_hash = decode(r.content_hash, 'hex'), status = r.status,
        business_type = r.business_type, title = r.title, description = r.description, established_at = r.established_at,
        street_address1 = r.street_address1, city = r.city, state = r.state, postal_code = r.postal_code,
        country = r.country, visibility = r.visibility, financials = r.financials, property = r.property,
        financing = r.financing,
        description_optimized = CASE WHEN r.description_changed THEN NULL ELSE l.description_optimized END,
        version = l.version + 1, updated_at = ${at}::timestamptz, index_state = 'pending'
      FROM r WHERE l.id = r.id AND l.version = r.expected_version
      RETURNING l.id, l.version
    ), d AS (
      DELETE FROM listing_photos p USING ${set(photos.gone)} AS x(listing_id, url, sort_key), u
      WHERE u.id = x.listing_id AND p.listing_id = x.listing_id AND p.url = x.url
    ), m AS (
      UPDATE listing_photos p SET sort_key = x.sort_key FROM ${set(photos.moved)} AS x(listing_id, url, sort_key), u
      WHERE u.id = x.listing_id AND p.listing_id = x.listing_id AND p.url = x.url
    ), a AS (
      INSERT INTO listing_photos (listing_id, url, sort_key)
      SELECT x.listing_id, x.url, x.sort_key FROM ${set(photos.added)} WITH ORDINALITY AS x(listing_id, url, sort_key, n)
      JOIN u ON u.id = x.listing_id ORDER BY x.n
    ), h AS (
      INSERT INTO listing_status_history (listing_id, from_status, to_status)
      SELECT r.id, r.status_from, r.status_to FROM r JOIN u ON u.id = r.id WHERE r.status_to IS NOT NULL ORDER BY r.n
    ), c AS (
      INSERT INTO listing_history (listing_id, version, key_id, request_id, changes, status_from, status_to)
      SELECT r.id, u.version, r.key_id, r.request_id, r.changes, r.status_from, r.status_to
      FROM r JOIN u ON u.id = r.id ORDER BY r.n
    )
    SELECT id FROM u`;
  return new Set(rows.map((r) => Number(r.id)));
}
