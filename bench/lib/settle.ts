// Equal starting conditions for each measured phase: what one phase wrote or deleted (the baselines remove
// their rows) is vacuumed and checkpointed before the next one starts, so no phase pays for another's
// autovacuum or checkpoint. Best effort: a database user without the rights just skips it.
import type postgres from "postgres";

export async function settleDatabase(sql: postgres.Sql): Promise<void> {
  await sql`VACUUM (ANALYZE) listings, listing_photos, listing_status_history, listing_history, outbox`.catch(() => {});
  await sql`CHECKPOINT`.catch(() => {});
}
