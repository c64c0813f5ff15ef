import type postgres from "postgres";

/**
 * When a listing's asking price last went down and stayed down ("priceReducedAt"), from the change history: the
 * latest listing_history change of financials.askingPrice from a higher number to a lower one, counted only while
 * the current asking price is still below the price before that reduction (a reduction taken back by a later
 * increase does not count). NULL when there is none. The buyers' badge and filter ("price reduced": within
 * PRICE_REDUCED_DAYS of now) read it; the pages (marketplace) and the search documents (indexer) both take it from
 * here, so they agree. `listing` is the alias of the listings row in the calling query.
 */
export function priceReducedAt(sql: postgres.Sql, listing = "l") {
  const l = (column: string) => sql.unsafe(`${listing}.${column}`);
  // Numbers only, read through CASE: the planner may evaluate a WHERE condition's cast before its type check.
  const num = (json: string) =>
    sql.unsafe(`CASE WHEN jsonb_typeof(${json}) = 'number' THEN (${json})::text::numeric END`);
  return sql`
  (SELECT max(h.changed_at) FROM listing_history h
     CROSS JOIN LATERAL jsonb_array_elements(h.changes) c
     CROSS JOIN LATERAL (SELECT ${num("c->'from'")} AS before, ${num("c->'to'")} AS after) v
   WHERE h.listing_id = ${l("id")} AND c->>'path' = 'financials.askingPrice' AND v.after < v.before
     AND ${num(`${listing}.financials->'askingPrice'`)} < v.before)`;
}
