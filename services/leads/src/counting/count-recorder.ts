// Records leads for counting: the raw row and its hour/day/month buckets in one statement, so they always
// agree. Idempotent: a lead already recorded (a redelivered event) inserts nothing and increments nothing.
// Each newly recorded lead is announced to webhooks (lead.received) with its office's new total, in the same
// transaction: leads of one office are recorded one transaction at a time, so every total is exact and a later
// lead of the office never carries a smaller one.
import { LeadReceived, leadReceivedFact, type LeadSubmittedPayload, type RecordMode } from "@pss/contracts";
import { insertOutboxFacts, OFFICE_LEAD_COUNT_LOCK, partnerFactRow } from "@pss/service-kit";
import type postgres from "postgres";

export type CountedLead = Pick<
  LeadSubmittedPayload,
  "leadId" | "serviceListingId" | "serviceBrokerId" | "officeId" | "organizationId" | "createdAt"
>;

interface Recorded {
  lead_id: string;
  listing_id: string;
  broker_id: string;
  office_id: number;
  created_at: Date;
}

/** Returns how many of the leads were new. */
export async function recordLeads(sql: postgres.Sql, leads: CountedLead[]): Promise<number> {
  const unique = [...new Map(leads.map((l) => [l.leadId, l])).values()];
  if (unique.length === 0) return 0;
  const col = <K extends keyof CountedLead>(k: K) => unique.map((l) => l[k]);
  const offices = [...new Set(unique.map((l) => l.officeId))].sort((a, b) => a - b);
  return sql.begin(async (tx) => {
    // In office order, like the bucket upserts below, so concurrent batches never wait on each other in a cycle.
    for (const office of offices) await tx`SELECT pg_advisory_xact_lock(${OFFICE_LEAD_COUNT_LOCK}, ${office})`;
    const recorded = await tx<Recorded[]>`
      WITH input AS (
        SELECT * FROM unnest(${col("leadId")}::uuid[], ${col("serviceListingId")}::bigint[], ${col("serviceBrokerId")}::bigint[],
                             ${col("officeId")}::int[], ${col("organizationId")}::int[], ${col("createdAt")}::timestamptz[])
          AS t(lead_id, listing_id, broker_id, office_id, organization_id, created_at)
      ), recorded AS (
        INSERT INTO counted_leads (lead_id, listing_id, broker_id, office_id, organization_id, created_at)
        SELECT * FROM input
        ON CONFLICT (lead_id) DO NOTHING
        RETURNING lead_id, listing_id, broker_id, office_id, created_at
      ), bucketed AS (
        INSERT INTO lead_count_buckets (office_id, granularity, bucket_start, lead_count)
        SELECT office_id, g, date_trunc(g, created_at, 'UTC'), count(*)
        FROM recorded CROSS JOIN unnest(ARRAY['hour', 'day', 'month']) AS g
        GROUP BY 1, 2, 3
        ORDER BY 1, 2, 3
        ON CONFLICT (office_id, granularity, bucket_start) DO UPDATE SET lead_count = lead_count_buckets.lead_count + EXCLUDED.lead_count
      )
      SELECT lead_id::text, listing_id::text, broker_id::text, office_id, created_at FROM recorded`;
    if (recorded.length > 0) await announce(tx, recorded);
    return recorded.length;
  });
}

/** lead.received for each recorded lead: the office's total after it (the office's leads numbered in submission order). */
async function announce(tx: postgres.TransactionSql, recorded: Recorded[]): Promise<void> {
  const offices = [...new Set(recorded.map((r) => r.office_id))];
  // A new statement sees this transaction's increments; the office locks keep everyone else's out until commit.
  // Both reads in one round trip (pipelined in the transaction): the offices' totals and whose records the leads are on.
  const [totalRows, records] = await Promise.all([
    tx<{ office_id: number; total: string }[]>`
      SELECT office_id, sum(lead_count)::text AS total FROM lead_count_buckets
      WHERE granularity = 'month' AND office_id = ANY(${offices}::int[]) GROUP BY office_id`,
    tx<
      {
        lead_id: string;
        partner_id: string;
        mode: RecordMode;
        listing_id: string;
        listing_external_id: string;
        broker_id: string;
        broker_external_id: string;
      }[]
    >`
      SELECT x.lead_id::text, l.partner_id, l.mode, l.id::text AS listing_id, l.external_id AS listing_external_id, b.id::text AS broker_id, b.external_id AS broker_external_id
      FROM unnest(${recorded.map((r) => r.lead_id)}::uuid[], ${recorded.map((r) => r.listing_id)}::bigint[], ${recorded.map((r) => r.broker_id)}::bigint[]) AS x(lead_id, listing_id, broker_id)
      JOIN listings l ON l.id = x.listing_id
      JOIN brokers b ON b.id = x.broker_id`,
  ]);
  const totals = new Map(totalRows.map((r) => [r.office_id, Number(r.total)]));
  const ordered = [...recorded].sort(
    (a, b) => a.created_at.getTime() - b.created_at.getTime() || a.lead_id.localeCompare(b.lead_id),
  );
  const later = new Map<number, number>();
  const counts = new Map<string, number>();
  for (const r of ordered.reverse()) {
    const after = later.get(r.office_id) ?? 0;
    counts.set(r.lead_id, (totals.get(r.office_id) ?? 0) - after);
    later.set(r.office_id, after + 1);
  }
  const byLead = new Map(records.map((r) => [r.lead_id, r]));
  const facts = recorded.flatMap((r) => {
    const on = byLead.get(r.lead_id);
    // Its listing or broker is gone (test data purge): nothing to announce about it.
    if (!on) return [];
    const officeLeadCount = counts.get(r.lead_id)!;
    // Only live leads are counted here (a test key's simulated leads: services/api lead-repository.ts).
    return [
      partnerFactRow(
        LeadReceived,
        // version: the office's lead count, as in the data (the change feed's `version` of lead.received).
        { aggregateId: r.lead_id, version: officeLeadCount, partnerId: on.partner_id, mode: on.mode },
        leadReceivedFact(
          { id: on.listing_id, external_id: on.listing_external_id },
          { id: on.broker_id, external_id: on.broker_external_id },
          { officeId: r.office_id, officeLeadCount },
        ),
      ),
    ];
  });
  await insertOutboxFacts(tx, facts);
}
