// The writes of a batch's broker plans, set-based: one statement for all creates and one for all updates (each
// with the licenses, service areas and change history of the brokers it wrote, as data-modifying CTEs), then one
// for all their events and feed drafts (appendEvents). They store the rows upsertBroker stores for the same plan. Creates
// use ON CONFLICT DO NOTHING and updates are guarded by the version read, as upsertBroker's; RETURNING names the
// items that won, the others lost a race and come back as null for the caller to run alone.
import type postgres from "postgres";
import { BrokerUpserted } from "@pss/contracts";
import { sqlJson, appendEvents, outboxRow, type OutboxWrite } from "@pss/service-kit";
import { forHistory } from "../records/changes.ts";
import type { RecordScope } from "../records/record-scope.ts";
import type { WriteSource } from "../records/record-scope.ts";
import { changedLists, columns, licenseRows, serviceAreaRows } from "./broker-repository.ts";
import {
  brokerEventPayload,
  plannedBrokerQuality,
  plannedPhone,
  type BrokerPlan,
  type BrokerUpsertResult,
} from "./broker-service.ts";

type WritePlan = Extract<BrokerPlan, { kind: "create" | "update" }>;

export interface PlannedBrokerWrite {
  externalId: string;
  plan: WritePlan;
}

/** The broker columns of a plan as a recordset row (COLUMNS names and types them). */
const record = (plan: WritePlan) => ({
  ...columns(plan.document),
  profile: plan.document.profile ?? {},
  content_hash: plan.hash.toString("hex"),
  changes: forHistory(plan.changes),
});
const COLUMNS = `name text, email text, phone text, avatar_url text, forwarding_email text, profile jsonb,
  content_hash text, changes jsonb`;

/** Per item, in order: the result, or null when it lost a race. `officeId`: where new brokers go (creates only). */
export async function writeBrokerPlans(
  tx: postgres.TransactionSql,
  scope: RecordScope,
  writes: PlannedBrokerWrite[],
  source: WriteSource,
  officeId: number | null,
): Promise<(BrokerUpsertResult | null)[]> {
  const creates = writes.flatMap((w, k) => (w.plan.kind === "create" ? [{ ...w, k }] : []));
  const updates = writes.flatMap((w, k) => (w.plan.kind === "update" ? [{ ...w, k, plan: w.plan }] : []));
  if (creates.length && officeId === null) throw new Error("a batch creating brokers needs the default office");
  const newOffice = officeId ?? 0;
  const [created, updated] = await Promise.all([
    insertCreates(tx, scope, creates, source, newOffice),
    updateMany(tx, updates, source),
  ]);

  const out = new Array<BrokerUpsertResult | null>(writes.length).fill(null);
  const events: (OutboxWrite & { k: number })[] = [];
  const written = (
    { k, externalId, plan }: PlannedBrokerWrite & { k: number },
    id: string,
    version: number,
    office: number,
  ) => {
    out[k] = {
      brokerId: id,
      created: plan.kind === "create",
      changed: true,
      phone: plannedPhone(plan),
      quality: plannedBrokerQuality(plan),
    };
    events.push({
      k,
      row: outboxRow(
        BrokerUpserted,
        { aggregateId: id, version, partnerId: scope.partnerId, mode: scope.mode },
        brokerEventPayload(id, externalId, office, plan.document),
        source.trace,
      ),
      feed: { changes: plan.changes },
    });
  };
  for (const c of creates) {
    const id = created.get(c.externalId);
    if (id !== undefined) written(c, id, 1, newOffice);
  }
  for (const u of updates) {
    const row = updated.get(u.plan.current.id);
    if (row) written(u, u.plan.current.id, row.version, row.officeId);
  }
  events.sort((a, b) => a.k - b.k);
  await appendEvents(tx, events);
  return out;
}

/** List rows of the brokers that replace them, keyed by `key` (the external ID of a new broker, an update's ID). */
function listRows<K extends string | number>(items: { key: K; plan: WritePlan }[]) {
  const changed = (plan: WritePlan) =>
    changedLists(plan.document, plan.kind === "update" ? plan.current.document : null);
  return {
    licenses: items.flatMap(({ key, plan }) =>
      changed(plan).licenses ? licenseRows(plan.document).map((r) => ({ key, ...r })) : [],
    ),
    serviceAreas: items.flatMap(({ key, plan }) =>
      changed(plan).serviceAreas ? serviceAreaRows(plan.document).map((r) => ({ key, ...r })) : [],
    ),
    // Per update, how many rows each list keeps (-1: unchanged, left alone): rows past it are removed.
    counts: items.map(({ key, plan }) => ({
      key,
      licenses: changed(plan).licenses ? licenseRows(plan.document).length : -1,
      service_areas: changed(plan).serviceAreas ? serviceAreaRows(plan.document).length : -1,
    })),
  };
}

async function insertCreates(
  tx: postgres.TransactionSql,
  scope: RecordScope,
  creates: PlannedBrokerWrite[],
  source: WriteSource,
  officeId: number,
): Promise<Map<string, string>> {
  if (creates.length === 0) return new Map();
  const records = creates.map((c, n) => ({ n, external_id: c.externalId, ...record(c.plan) }));
  const lists = listRows(creates.map((c) => ({ key: c.externalId, plan: c.plan })));
  const { keyId, requestId } = source.origin;
  const rows = await tx`
    WITH r AS (
      SELECT * FROM jsonb_to_recordset(${sqlJson(tx, records)}::jsonb) AS r(n int, external_id text, ${tx.unsafe(COLUMNS)})
    ), b AS (
      INSERT INTO brokers (partner_id, mode, external_id, office_id, name, email, phone, avatar_url, forwarding_email, profile, avatar_state, content_hash)
      SELECT ${scope.partnerId}::uuid, ${scope.mode}::text, r.external_id, ${officeId}::int, r.name, r.email, r.phone, r.avatar_url,
        r.forwarding_email, r.profile, CASE WHEN r.avatar_url <> '' THEN 'pending' END, decode(r.content_hash, 'hex')
      FROM r ORDER BY r.n
      ON CONFLICT (partner_id, mode, external_id) DO NOTHING
      RETURNING id, external_id
    ), li AS (
      INSERT INTO broker_licenses (broker_id, position, license_number, state, country)
      SELECT b.id, x.position, x.license_number, x.state, x.country
      FROM jsonb_to_recordset(${sqlJson(tx, lists.licenses)}::jsonb) AS x(key text, position int, license_number text, state text, country text)
      JOIN b ON b.external_id = x.key
    ), sa AS (
      INSERT INTO broker_service_areas (broker_id, position, city, county, state, country)
      SELECT b.id, x.position, x.city, x.county, x.state, x.country
      FROM jsonb_to_recordset(${sqlJson(tx, lists.serviceAreas)}::jsonb) AS x(key text, position int, city text, county text, state text, country text)
      JOIN b ON b.external_id = x.key
    ), h AS (
      INSERT INTO broker_history (broker_id, version, key_id, request_id, changes)
      SELECT b.id, 1, ${keyId}::bigint, ${requestId}::text, r.changes FROM r JOIN b ON b.external_id = r.external_id ORDER BY r.n
    )
    SELECT id::text AS id, external_id FROM b`;
  return new Map(rows.map((r) => [r.external_id as string, r.id as string]));
}

async function updateMany(
  tx: postgres.TransactionSql,
  updates: { plan: Extract<WritePlan, { kind: "update" }> }[],
  source: WriteSource,
): Promise<Map<string, { version: number; officeId: number }>> {
  if (updates.length === 0) return new Map();
  const records = updates.map(({ plan }, n) => ({
    n,
    id: plan.current.id,
    expected_version: plan.current.version,
    avatar_changed: (plan.current.document.avatarUrl ?? null) !== (plan.document.avatarUrl ?? null),
    ...record(plan),
  }));
  const lists = listRows(updates.map(({ plan }) => ({ key: Number(plan.current.id), plan })));
  const { keyId, requestId } = source.origin;
  // A changed list is rewritten position by position and cut to its new length: the same rows as a delete and
  // insert, without one statement deleting and inserting the same primary key.
  const rows = await tx`
    WITH r AS (
      SELECT * FROM jsonb_to_recordset(${sqlJson(tx, records)}::jsonb)
        AS r(n int, id bigint, expected_version int, avatar_changed boolean, ${tx.unsafe(COLUMNS)})
    ), u AS (
      UPDATE brokers b SET name = r.name, email = r.email, phone = r.phone, forwarding_email = r.forwarding_email,
        profile = r.profile, content_hash = decode(r.content_hash, 'hex'), version = b.version + 1, updated_at = now(),
        avatar_url = CASE WHEN r.avatar_changed THEN r.avatar_url ELSE b.avatar_url END,
        avatar_state = CASE WHEN NOT r.avatar_changed THEN b.avatar_state WHEN r.avatar_url <> '' THEN 'pending' END,
        avatar_failure_reason = CASE WHEN r.avatar_changed THEN NULL ELSE b.avatar_failure_reason END,
        avatar_warning = CASE WHEN r.avatar_changed THEN NULL ELSE b.avatar_warning END,
        avatar_width = CASE WHEN r.avatar_changed THEN NULL ELSE b.avatar_width END,
        avatar_height = CASE WHEN r.avatar_changed THEN NULL ELSE b.avatar_height END,
        avatar_variants = CASE WHEN r.avatar_changed THEN NULL ELSE b.avatar_variants END
      FROM r WHERE b.id = r.id AND b.version = r.expected_version
      RETURNING b.id, b.version, b.office_id
    ), keep AS (
      SELECT x.* FROM jsonb_to_recordset(${sqlJson(tx, lists.counts)}::jsonb) AS x(key bigint, licenses int, service_areas int)
      JOIN u ON u.id = x.key
    ), ld AS (
      DELETE FROM broker_licenses l USING keep WHERE l.broker_id = keep.key AND keep.licenses >= 0 AND l.position >= keep.licenses
    ), li AS (
      INSERT INTO broker_licenses (broker_id, position, license_number, state, country)
      SELECT x.key, x.position, x.license_number, x.state, x.country
      FROM jsonb_to_recordset(${sqlJson(tx, lists.licenses)}::jsonb) AS x(key bigint, position int, license_number text, state text, country text)
      JOIN u ON u.id = x.key
      ON CONFLICT (broker_id, position) DO UPDATE SET license_number = EXCLUDED.license_number, state = EXCLUDED.state,
        country = EXCLUDED.country
    ), sd AS (
      DELETE FROM broker_service_areas a USING keep WHERE a.broker_id = keep.key AND keep.service_areas >= 0 AND a.position >= keep.service_areas
    ), sa AS (
      INSERT INTO broker_service_areas (broker_id, position, city, county, state, country)
      SELECT x.key, x.position, x.city, x.county, x.state, x.country
      FROM jsonb_to_recordset(${sqlJson(tx, lists.serviceAreas)}::jsonb) AS x(key bigint, position int, city text, county text, state text, country text)
      JOIN u ON u.id = x.key
      ON CONFLICT (broker_id, position) DO UPDATE SET city = EXCLUDED.city, county = EXCLUDED.county,
        state = EXCLUDED.state, country = EXCLUDED.country
    ), h AS (
      INSERT INTO broker_history (broker_id, version, key_id, request_id, changes)
      SELECT r.id, u.version, ${keyId}::bigint, ${requestId}::text, r.changes FROM r JOIN u ON u.id = r.id ORDER BY r.n
    )
    SELECT id::text AS id, version, office_id FROM u`;
  return new Map(rows.map((r) => [r.id as string, { version: r.version as number, officeId: r.office_id as number }]));
}
