import { FEED_RECORD_CHANGE_TYPES } from "@pss/contracts";
import type postgres from "postgres";

/**
 * "This change-feed event is a fact, not a record change": the predicate of the indexes that find facts by event ID
 * and by time (migration 0049: `partner_feed_fact_occurred`, `feed_drafts_fact_event`), exactly as they were
 * created. A query reads through such an index only when its own WHERE holds this same condition with the same
 * constants (a parameter could not prove it to the planner), so queries add it with factsOnly.
 */
export const FEED_FACT_PREDICATE = `type NOT IN (${FEED_RECORD_CHANGE_TYPES.map((t) => `'${t}'`).join(", ")})`;

/** FEED_FACT_PREDICATE for a WHERE clause, of the table `alias` when given (`f.type NOT IN (…)`). */
export function factsOnly(sql: postgres.Sql | postgres.TransactionSql, alias?: string) {
  return sql.unsafe(alias ? `${alias}.${FEED_FACT_PREDICATE}` : FEED_FACT_PREDICATE);
}
