// THE definition of "visible to buyers", in one place. Every public read goes through it: the JSON views, the
// pages, the search filter and its PostgreSQL re-check, the broker's listings, similar listings on a 410 page,
// sitemap.xml and lead intake. A rule that keeps records away from buyers (e.g. test-mode records) is added
// here, and only here, and reaches all of them.
import { BUYER_VISIBLE_STATUSES } from "@pss/contracts";
import type postgres from "postgres";

/** A client or a transaction: lead intake checks visibility inside its write transaction. */
type Sql = postgres.Sql | postgres.TransactionSql;
type Fragment = postgres.PendingQuery<postgres.Row[]>;

const VISIBLE_STATUSES = [...BUYER_VISIBLE_STATUSES];
/** Listings buyers could see once and no longer may: their public URL answers 410 Gone, not 404. */
const GONE_STATUSES = ["SOLD", "ARCHIVED"];

/**
 * A listing record that may ever be shown to buyers, whatever its status (`l`: the alias of `listings` in the
 * query). Records that must never reach buyers at all are excluded here; such a record is a plain 404.
 */
export function publicListingRecord(sql: Sql, l = "l"): Fragment {
  void l;
  return sql`TRUE`;
}

/** A broker record that may be shown to buyers (`b`: the alias of `brokers`). */
export function brokerVisibleToBuyers(sql: Sql, b = "b"): Fragment {
  void b;
  return sql`TRUE`;
}

/** A listing buyers may see now: a public record in a buyer-visible status (spec section 3). */
export function listingVisibleToBuyers(sql: Sql, l = "l"): Fragment {
  return sql`(${publicListingRecord(sql, l)} AND ${sql(l)}.status = ANY(${VISIBLE_STATUSES}))`;
}

/** A public listing record that left the market (SOLD, ARCHIVED): its page answers 410 with similar listings. */
export function listingGoneForBuyers(sql: Sql, l = "l"): Fragment {
  return sql`(${publicListingRecord(sql, l)} AND ${sql(l)}.status = ANY(${GONE_STATUSES}))`;
}

/**
 * The search index's part of the same rule: every buyers' search query carries these filter clauses. The
 * index lags PostgreSQL, so each hit is checked again with listingVisibleToBuyers (listing-search.ts).
 */
export function buyerSearchFilter(): unknown[] {
  return [{ terms: { status: VISIBLE_STATUSES } }];
}
