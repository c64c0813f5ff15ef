// Records leads for counting: the raw row and its hour/day/month buckets in one statement, so they always
// agree. Idempotent: a lead already recorded (a redelivered event) inserts nothing and increments nothing.
import type { LeadSubmittedPayload } from "@pss/contracts";
import type postgres from "postgres";

export type CountedLead = Pick<LeadSubmittedPayload, "leadId" | "serviceListingId" | "serviceBrokerId" | "officeId" | "organizationId" | "createdAt">;

/** Returns how many of the leads were new. */
export async function recordLeads(sql: postgres.Sql, leads: CountedLead[]): Promise<number> {
  const unique = [...new Map(leads.map((l) => [l.leadId, l])).values()];
  if (unique.length === 0) return 0;
  const col = <K extends keyof CountedLead>(k: K) => unique.map((l) => l[k]);
  // Buckets are upserted in key order so concurrent batches lock rows in the same order (no deadlocks).
  const [row] = await sql<{ recorded: number }[]>`
    WITH input AS (
      SELECT * FROM unnest(${col("leadId")}::uuid[], ${col("serviceListingId")}::bigint[], ${col("serviceBrokerId")}::bigint[],
                           ${col("officeId")}::int[], ${col("organizationId")}::int[], ${col("createdAt")}::timestamptz[])
        AS t(lead_id, listing_id, broker_id, office_id, organization_id, created_at)
    ), recorded AS (
      INSERT INTO counted_leads (lead_id, listing_id, broker_id, office_id, organization_id, created_at)
      SELECT * FROM input
      ON CONFLICT (lead_id) DO NOTHING
      RETURNING office_id, created_at
    ), bucketed AS (
      INSERT INTO lead_count_buckets (office_id, granularity, bucket_start, lead_count)
      SELECT office_id, g, date_trunc(g, created_at, 'UTC'), count(*)
      FROM recorded CROSS JOIN unnest(ARRAY['hour', 'day', 'month']) AS g
      GROUP BY 1, 2, 3
      ORDER BY 1, 2, 3
      ON CONFLICT (office_id, granularity, bucket_start) DO UPDATE SET lead_count = lead_count_buckets.lead_count + EXCLUDED.lead_count
    )
    SELECT count(*)::int AS recorded FROM recorded`;
  return row!.recorded;
}
