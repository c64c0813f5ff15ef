// Reads for the lead counts. Offices and organizations are looked up through the partner, so another
// partner's IDs are simply not found.
import type { PartnerOrganization } from "@pss/contracts";
import type postgres from "postgres";
import { toSlots, type Segment } from "./count-plan.ts";

export interface OfficeRow {
  id: number;
  name: string;
}

export async function findOffice(sql: postgres.Sql, partnerId: string, officeId: number): Promise<OfficeRow | null> {
  const [row] = await sql<OfficeRow[]>`
    SELECT o.id, o.name FROM offices o JOIN organizations g ON g.id = o.organization_id
    WHERE o.id = ${officeId} AND g.partner_id = ${partnerId}`;
  return row ?? null;
}

export async function findOrganization(
  sql: postgres.Sql,
  partnerId: string,
  organizationId: number,
): Promise<{ id: number; name: string; offices: OfficeRow[] } | null> {
  const rows = await sql<{ id: number; name: string; office_id: number | null; office_name: string | null }[]>`
    SELECT g.id, g.name, o.id AS office_id, o.name AS office_name
    FROM organizations g LEFT JOIN offices o ON o.organization_id = g.id
    WHERE g.id = ${organizationId} AND g.partner_id = ${partnerId}
    ORDER BY o.id`;
  if (rows.length === 0) return null;
  const offices = rows.flatMap((r) => (r.office_id === null ? [] : [{ id: r.office_id, name: r.office_name! }]));
  return { id: rows[0]!.id, name: rows[0]!.name, offices };
}

/** Every organization of the partner with its offices, oldest first: the IDs the lead-count routes take. */
export async function listOrganizations(sql: postgres.Sql, partnerId: string): Promise<PartnerOrganization[]> {
  const rows = await sql<
    { id: number; name: string; office_id: number | null; office_name: string | null; is_default: boolean | null }[]
  >`
    SELECT g.id, g.name, o.id AS office_id, o.name AS office_name, o.is_default
    FROM organizations g LEFT JOIN offices o ON o.organization_id = g.id
    WHERE g.partner_id = ${partnerId}
    ORDER BY g.id, o.id`;
  const organizations = new Map<number, PartnerOrganization>();
  for (const r of rows) {
    let organization = organizations.get(r.id);
    if (!organization) {
      organization = { organizationId: r.id, organizationName: r.name, offices: [] };
      organizations.set(r.id, organization);
    }
    if (r.office_id !== null) {
      organization.offices.push({
        officeId: r.office_id,
        officeName: r.office_name ?? "",
        isDefault: r.is_default === true,
      });
    }
  }
  return [...organizations.values()];
}

/** Whose leads to count: one office, or every office of an organization (resolved inside the query). */
export type CountScope = { officeId: number } | { organizationId: number };

// No lead predates the service, so the epoch serves as "from the beginning" and as an empty slot.
const BEGINNING = new Date(0);

/**
 * Leads per office over the planned segments, in one statement of one fixed shape (raw, hour, day, month,
 * day, hour, raw; unused slots are empty ranges), so each connection prepares it once and reuses the plan.
 * Bucket rows are read from the covering primary key (index-only), raw edges from (office_id, created_at).
 */
export async function countLeadsByOffice(
  sql: postgres.Sql,
  scope: CountScope,
  segments: Segment[],
): Promise<Map<number, number>> {
  const totals = new Map<number, number>();
  if (segments.length === 0) return totals;
  const [r1, h1, d1, m, d2, h2, r2] = toSlots(segments, BEGINNING) as [Slot, Slot, Slot, Slot, Slot, Slot, Slot];
  const ids = () =>
    "officeId" in scope
      ? sql`ARRAY[${scope.officeId}::int]`
      : sql`ARRAY(SELECT id FROM offices WHERE organization_id = ${scope.organizationId})`;
  const raw = (s: Slot) => sql`
    SELECT office_id, count(*) AS n FROM counted_leads
    WHERE office_id = ANY(${ids()}) AND created_at >= ${s.from} AND created_at < ${s.to} GROUP BY office_id`;
  const bucket = (granularity: string, s: Slot) => sql`
    SELECT office_id, sum(lead_count) AS n FROM lead_count_buckets
    WHERE office_id = ANY(${ids()}) AND granularity = ${granularity} AND bucket_start >= ${s.from} AND bucket_start < ${s.to} GROUP BY office_id`;
  const rows = await sql<{ office_id: number; total: string }[]>`
    SELECT office_id, sum(n)::bigint::text AS total FROM (
      ${raw(r1)} UNION ALL ${bucket("hour", h1)} UNION ALL ${bucket("day", d1)} UNION ALL ${bucket("month", m)}
      UNION ALL ${bucket("day", d2)} UNION ALL ${bucket("hour", h2)} UNION ALL ${raw(r2)}
    ) AS t GROUP BY office_id`;
  for (const r of rows) totals.set(r.office_id, Number(r.total));
  return totals;
}

type Slot = { from: Date; to: Date };

/**
 * Test mode: the simulated leads of test listings (leads.mode = 'test', never in counted_leads or the buckets),
 * counted from the leads table through its partial index. They are few: no buckets needed. The office scope is
 * the same as live (test brokers sit in the partner's real offices); only the partner's own test leads exist there.
 */
export async function countTestLeadsByOffice(
  sql: postgres.Sql,
  scope: CountScope,
  start: Date | null,
  end: Date,
): Promise<Map<number, number>> {
  const ids =
    "officeId" in scope
      ? sql`ARRAY[${scope.officeId}::int]`
      : sql`ARRAY(SELECT id FROM offices WHERE organization_id = ${scope.organizationId})`;
  const rows = await sql<{ office_id: number; total: string }[]>`
    SELECT office_id, count(*)::text AS total FROM leads
    WHERE mode = 'test' AND office_id = ANY(${ids}) AND created_at < ${end} ${start ? sql`AND created_at >= ${start}` : sql``}
    GROUP BY office_id`;
  return new Map(rows.map((r) => [r.office_id, Number(r.total)]));
}
