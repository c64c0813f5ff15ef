import { BUYER_VISIBLE_STATUSES } from "@pss/contracts";
import type postgres from "postgres";

const visible = [...BUYER_VISIBLE_STATUSES];

/**
 * When a listing last went live ("listedAt"): the latest move from a hidden status (or creation) into a
 * buyer-visible one, from listing_status_history; the listing's creation when there is none. A status history
 * fact, not a visibility rule: the buyers' pages (API) and the search documents (indexer) both show it, so it is
 * written once, here. `listing` is the alias of the listings row in the calling query.
 */
export function listedAt(sql: postgres.Sql, listing = "l") {
  return sql`
  COALESCE((SELECT max(h.changed_at) FROM listing_status_history h
            WHERE h.listing_id = ${sql.unsafe(`${listing}.id`)} AND h.to_status = ANY(${visible})
              AND (h.from_status IS NULL OR NOT h.from_status = ANY(${visible}))), ${sql.unsafe(`${listing}.created_at`)})`;
}
