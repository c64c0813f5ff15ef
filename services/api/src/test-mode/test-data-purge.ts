// Deletion of test records (docs/sandbox.md): all of a partner's (DELETE /partner/v1/test-data), or those nobody
// wrote for the retention (the retention job). Live records are never touched: every statement is limited to
// mode = 'test'. A listing goes with its leads, photos, status and change history; a broker goes once no listing
// or lead refers to it. Batches keep each transaction short.
import type postgres from "postgres";

export interface PurgeCounts {
  listings: number;
  brokers: number;
  leads: number;
}

/** One partner's test records, or every test record not written since `olderThan`. */
export type PurgeTarget = { partnerId: string } | { olderThan: Date };

const BATCH = 500;
/** foreign_key_violation: a listing started referring to the broker while it was being deleted. */
const FK_VIOLATION = "23503";

function condition(sql: postgres.Sql, alias: "l" | "b", target: PurgeTarget) {
  const a = sql.unsafe(alias);
  return "partnerId" in target
    ? sql`${a}.partner_id = ${target.partnerId}`
    : sql`${a}.updated_at < ${target.olderThan}`;
}

export async function purgeTestData(sql: postgres.Sql, target: PurgeTarget): Promise<PurgeCounts> {
  const counts: PurgeCounts = { listings: 0, brokers: 0, leads: 0 };
  // A listing being written right now is skipped (SKIP LOCKED) rather than waited for: the partner's next purge
  // or the next run takes it.
  for (;;) {
    const taken = await sql.begin(async (tx) => {
      const rows = await tx`
        SELECT l.id FROM listings l WHERE l.mode = 'test' AND ${condition(sql, "l", target)}
        ORDER BY l.id LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`;
      if (rows.length === 0) return 0;
      const ids = rows.map((r) => String(r.id));
      const leads = await tx`DELETE FROM leads WHERE listing_id = ANY(${ids}::bigint[]) AND mode = 'test'`;
      const listings = await tx`DELETE FROM listings WHERE id = ANY(${ids}::bigint[]) AND mode = 'test'`;
      counts.leads += leads.count;
      counts.listings += listings.count;
      return rows.length;
    });
    if (taken < BATCH) break;
  }
  for (;;) {
    let taken: number;
    try {
      taken = await sql.begin(async (tx) => {
        const deleted = await tx`
          DELETE FROM brokers WHERE id IN (
            SELECT b.id FROM brokers b
            WHERE b.mode = 'test' AND ${condition(sql, "b", target)}
              AND NOT EXISTS (SELECT 1 FROM listings l WHERE l.broker_id = b.id)
              AND NOT EXISTS (SELECT 1 FROM leads d WHERE d.broker_id = b.id)
            ORDER BY b.id LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
          AND mode = 'test'`;
        counts.brokers += deleted.count;
        return deleted.count;
      });
    } catch (err) {
      // A broker just became referenced again: it is in use, keep it (this batch rolled back; later runs go on).
      if ((err as { code?: string }).code === FK_VIOLATION) break;
      throw err;
    }
    if (taken < BATCH) break;
  }
  return counts;
}

/** Change history entries older than `before`, in batches; returns how many were deleted. */
export async function purgeOldHistory(sql: postgres.Sql, before: Date): Promise<number> {
  let total = 0;
  for (const table of ["listing_history", "broker_history"] as const) {
    for (;;) {
      const deleted = await sql`
        DELETE FROM ${sql(table)} WHERE id IN (SELECT id FROM ${sql(table)} WHERE changed_at < ${before} ORDER BY id LIMIT ${BATCH * 10})`;
      total += deleted.count;
      if (deleted.count < BATCH * 10) break;
    }
  }
  return total;
}
