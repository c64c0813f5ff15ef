// SQL for brokers. Functions take the transaction they run in.
import type postgres from "postgres";
import type { PagePosition, PageRequest } from "../http/pagination.ts";
import { readCommitSafePage } from "../records/commit-safe-page.ts";
import type { RecordScope, WriteOrigin } from "../records/record-scope.ts";
import type { FieldChange, RecordMode } from "@pss/contracts";
import type { BrokerDocument } from "./broker-document.ts";
import { sqlJson } from "@pss/service-kit";

type Tx = postgres.TransactionSql | postgres.Sql;

export interface StoredBroker {
  id: string;
  partnerId: string;
  mode: RecordMode;
  externalId: string;
  officeId: number;
  version: number;
  contentHash: Buffer;
  document: BrokerDocument;
  avatar: {
    state: string | null;
    failureReason: string | null;
    warning: string | null;
    width: number | null;
    height: number | null;
    variants: unknown[] | null;
  };
  createdAt: Date;
  updatedAt: Date;
}

const SELECT = (tx: Tx) => tx`
  SELECT b.id::text AS id, b.partner_id, b.mode, b.external_id, b.office_id, b.version, b.content_hash, b.name, b.email, b.phone,
         b.avatar_url, b.forwarding_email, b.profile, b.avatar_state, b.avatar_failure_reason, b.avatar_warning,
         b.avatar_width, b.avatar_height, b.avatar_variants, b.created_at, b.updated_at, b.write_xid::text AS write_xid,
         COALESCE((SELECT json_agg(json_strip_nulls(json_build_object('licenseNumber', l.license_number, 'state', l.state, 'country', l.country)) ORDER BY l.position)
                   FROM broker_licenses l WHERE l.broker_id = b.id), '[]') AS licenses,
         COALESCE((SELECT json_agg(json_strip_nulls(json_build_object('city', a.city, 'county', a.county, 'state', a.state, 'country', a.country)) ORDER BY a.position)
                   FROM broker_service_areas a WHERE a.broker_id = b.id), '[]') AS service_areas
  FROM brokers b`;

function toStored(row: postgres.Row): StoredBroker {
  const document: BrokerDocument = { name: row.name, email: row.email };
  if (row.phone !== null) document.phone = row.phone;
  if (row.avatar_url !== null) document.avatarUrl = row.avatar_url;
  if (row.forwarding_email !== null) document.forwardingEmail = row.forwarding_email;
  if (row.profile && Object.keys(row.profile).length > 0) document.profile = row.profile;
  if (row.licenses.length > 0) document.licenses = row.licenses;
  if (row.service_areas.length > 0) document.serviceAreas = row.service_areas;
  return {
    id: row.id,
    partnerId: row.partner_id,
    mode: row.mode,
    externalId: row.external_id,
    officeId: row.office_id,
    version: row.version,
    contentHash: row.content_hash,
    document,
    avatar: {
      state: row.avatar_state,
      failureReason: row.avatar_failure_reason,
      warning: row.avatar_warning,
      width: row.avatar_width,
      height: row.avatar_height,
      variants: row.avatar_variants,
    },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function findBroker(tx: Tx, scope: RecordScope, externalId: string): Promise<StoredBroker | null> {
  const rows =
    await tx`${SELECT(tx)} WHERE b.partner_id = ${scope.partnerId} AND b.mode = ${scope.mode} AND b.external_id = ${externalId}`;
  return rows[0] ? toStored(rows[0]) : null;
}

/** findBroker for many external IDs at once (a batch): one read, the brokers found by external ID. */
export async function findBrokers(
  tx: Tx,
  scope: RecordScope,
  externalIds: string[],
): Promise<Map<string, StoredBroker>> {
  if (externalIds.length === 0) return new Map();
  const rows =
    await tx`${SELECT(tx)} WHERE b.partner_id = ${scope.partnerId} AND b.mode = ${scope.mode} AND b.external_id = ANY(${externalIds}::text[])`;
  return new Map(rows.map((r) => [r.external_id as string, toStored(r)]));
}

export async function findBrokerById(tx: Tx, id: string): Promise<StoredBroker | null> {
  const rows = await tx`${SELECT(tx)} WHERE b.id = ${id}`;
  return rows[0] ? toStored(rows[0]) : null;
}

export async function findBrokerIdByExternalId(
  tx: Tx,
  scope: RecordScope,
  externalId: string,
): Promise<{ id: string; externalId: string } | null> {
  const [row] =
    await tx`SELECT id::text AS id, external_id FROM brokers WHERE partner_id = ${scope.partnerId} AND mode = ${scope.mode} AND external_id = ${externalId}`;
  return row ? { id: row.id, externalId: row.external_id } : null;
}

/** The office new brokers of the partner join (both modes: test brokers sit in the partner's real offices). */
export async function defaultOfficeId(tx: Tx, partnerId: string): Promise<number> {
  const [row] = await tx`
    SELECT o.id FROM offices o JOIN organizations g ON g.id = o.organization_id
    WHERE g.partner_id = ${partnerId} AND o.is_default ORDER BY o.id LIMIT 1`;
  if (!row) throw new Error(`partner ${partnerId} has no default office`);
  return row.id;
}

export function columns(doc: BrokerDocument) {
  return {
    name: doc.name,
    email: doc.email,
    phone: doc.phone ?? null,
    avatar_url: doc.avatarUrl ?? null,
    forwarding_email: doc.forwardingEmail ?? null,
  };
}

/** Inserts unless another request created the same external ID first; returns null then. */
export async function insertBroker(
  tx: postgres.TransactionSql,
  args: { scope: RecordScope; externalId: string; officeId: number; document: BrokerDocument; hash: Buffer },
): Promise<{ id: string } | null> {
  const c = columns(args.document);
  const [row] = await tx`
    INSERT INTO brokers (partner_id, mode, external_id, office_id, name, email, phone, avatar_url, forwarding_email, profile, avatar_state, content_hash)
    VALUES (${args.scope.partnerId}, ${args.scope.mode}, ${args.externalId}, ${args.officeId}, ${c.name}, ${c.email}, ${c.phone}, ${c.avatar_url}, ${c.forwarding_email},
            ${sqlJson(tx, args.document.profile ?? {})}, ${c.avatar_url ? "pending" : null}, ${args.hash})
    ON CONFLICT (partner_id, mode, external_id) DO NOTHING
    RETURNING id::text AS id`;
  return row ? { id: row.id } : null;
}

/**
 * Guarded by the version that was read (no row lock is taken to read it): null when a concurrent write got
 * there first, and the caller reads again. Only the columns change, never a key, so the row lock this UPDATE
 * takes (FOR NO KEY UPDATE) does not block listings that reference the broker (their FK check takes KEY SHARE).
 */
export async function updateBroker(
  tx: postgres.TransactionSql,
  current: StoredBroker,
  document: BrokerDocument,
  hash: Buffer,
): Promise<{ version: number; officeId: number } | null> {
  const c = columns(document);
  const avatarChanged = (current.document.avatarUrl ?? null) !== c.avatar_url;
  const [row] = avatarChanged
    ? await tx`
      UPDATE brokers SET name = ${c.name}, email = ${c.email}, phone = ${c.phone}, avatar_url = ${c.avatar_url}, forwarding_email = ${c.forwarding_email},
        profile = ${sqlJson(tx, document.profile ?? {})}, content_hash = ${hash}, version = version + 1, updated_at = now(),
        avatar_state = ${c.avatar_url ? "pending" : null}, avatar_failure_reason = NULL, avatar_warning = NULL,
        avatar_width = NULL, avatar_height = NULL, avatar_variants = NULL
      WHERE id = ${current.id} AND version = ${current.version} RETURNING version, office_id`
    : await tx`
      UPDATE brokers SET name = ${c.name}, email = ${c.email}, phone = ${c.phone}, forwarding_email = ${c.forwarding_email},
        profile = ${sqlJson(tx, document.profile ?? {})}, content_hash = ${hash}, version = version + 1, updated_at = now()
      WHERE id = ${current.id} AND version = ${current.version} RETURNING version, office_id`;
  // office_id as it is now (the admin CLI moves brokers between offices without a version bump).
  return row ? { version: row.version, officeId: row.office_id } : null;
}

/** A document's license and service area rows, by position. */
export const licenseRows = (document: BrokerDocument) =>
  (document.licenses ?? []).map((l, position) => ({
    position,
    license_number: l.licenseNumber ?? null,
    state: l.state ?? null,
    country: l.country ?? null,
  }));
export const serviceAreaRows = (document: BrokerDocument) =>
  (document.serviceAreas ?? []).map((a, position) => ({
    position,
    city: a.city ?? null,
    county: a.county ?? null,
    state: a.state ?? null,
    country: a.country ?? null,
  }));

/** Which lists a write must replace: all of a new broker's, only the changed ones of an update. */
export function changedLists(document: BrokerDocument, previous: BrokerDocument | null) {
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? []) === JSON.stringify(b ?? []);
  return {
    licenses: !previous || !same(previous.licenses, document.licenses),
    serviceAreas: !previous || !same(previous.serviceAreas, document.serviceAreas),
  };
}

export async function replaceBrokerLists(
  tx: postgres.TransactionSql,
  brokerId: string,
  document: BrokerDocument,
  previous: BrokerDocument | null,
): Promise<void> {
  const changed = changedLists(document, previous);
  if (changed.licenses) {
    await tx`DELETE FROM broker_licenses WHERE broker_id = ${brokerId}`;
    const rows = licenseRows(document).map((r) => ({ broker_id: brokerId, ...r }));
    if (rows.length) await tx`INSERT INTO broker_licenses ${tx(rows)}`;
  }
  if (changed.serviceAreas) {
    await tx`DELETE FROM broker_service_areas WHERE broker_id = ${brokerId}`;
    const rows = serviceAreaRows(document).map((r) => ({ broker_id: brokerId, ...r }));
    if (rows.length) await tx`INSERT INTO broker_service_areas ${tx(rows)}`;
  }
}

/** The change history row of a version this request wrote, in the caller's transaction. */
export async function insertBrokerHistory(
  tx: postgres.TransactionSql,
  args: { brokerId: string; version: number; origin: WriteOrigin; changes: FieldChange[] },
): Promise<void> {
  await tx`
    INSERT INTO broker_history (broker_id, version, key_id, request_id, changes)
    VALUES (${args.brokerId}::bigint, ${args.version}, ${args.origin.keyId}::bigint, ${args.origin.requestId}::text, ${sqlJson(tx, args.changes)}::jsonb)`;
}

export type PageArgs = PageRequest & { scope: RecordScope };

/** One page of the commit-safe reconciliation order (records/commit-safe-page.ts). */
export async function pageBrokers(
  tx: Tx,
  args: PageArgs,
): Promise<{ rows: StoredBroker[]; nextCursor: string | null }> {
  const { scope, ...page } = args;
  return readCommitSafePage(tx, {
    table: "brokers",
    scope,
    page,
    async fetch(after: PagePosition, limit: number, updatedSince: Date | null) {
      const rows = await tx`${SELECT(tx)}
        WHERE b.partner_id = ${scope.partnerId} AND b.mode = ${scope.mode}
          AND (b.write_xid, b.id) > (${after.xid}::xid8, ${after.id}::bigint)
          ${updatedSince ? tx`AND b.updated_at >= ${updatedSince}` : tx``}
        ORDER BY b.write_xid, b.id LIMIT ${limit}`;
      return rows.map((r) => ({ row: toStored(r), position: { xid: r.write_xid as string, id: r.id as string } }));
    },
  });
}
