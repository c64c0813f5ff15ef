// THE definition of "visible to buyers", in one place. Every public read goes through it: the JSON views, the
// pages, the search filter and its PostgreSQL re-check, the broker's listings, similar listings on a 410 page,
// sitemap.xml and lead intake (JSON and the listing page's form). A rule that keeps records away from buyers is
// added here, and only here, and reaches all of them: test-mode records (docs/sandbox.md) are never public.
// The same rule in TypeScript is isVisibleToBuyers in @pss/contracts (the indexer's decision what goes into the
// search index); test/buyer-visibility.test.ts checks in PostgreSQL that the two agree for every status and mode.
import { BUYER_VISIBLE_STATUSES, LIVE_MODE } from "@pss/contracts";
import type postgres from "postgres";

/** A client or a transaction: lead intake checks visibility inside its write transaction. */
type Sql = postgres.Sql | postgres.TransactionSql;
type Fragment = postgres.PendingQuery<postgres.Row[]>;

const VISIBLE_STATUSES = [...BUYER_VISIBLE_STATUSES];
/** Listings buyers could see once and no longer may: their public URL answers 410 Gone, not 404. */
const GONE_STATUSES = ["SOLD", "ARCHIVED"];

/**
 * A listing record that may ever be shown to buyers, whatever its status (`l`: the alias of `listings` in the
 * query): a live record. A test record is never public; to a buyer it does not exist (a plain 404, never a 410).
 */
export function publicListingRecord(sql: Sql, l = "l"): Fragment {
  return sql`${sql(l)}.mode = ${LIVE_MODE}`;
}

/** A broker record that may be shown to buyers (`b`: the alias of `brokers`): a live one. */
export function brokerVisibleToBuyers(sql: Sql, b = "b"): Fragment {
  return sql`${sql(b)}.mode = ${LIVE_MODE}`;
}

/**
 * The status half of the rule alone. Only a test record's preview uses it alone, to show what its live twin
 * would look like; every buyer-facing read uses listingVisibleToBuyers.
 */
export function listingInVisibleStatus(sql: Sql, l = "l"): Fragment {
  return sql`${sql(l)}.status = ANY(${VISIBLE_STATUSES})`;
}

/** A listing buyers may see now: a public record in a buyer-visible status (spec section 3). */
export function listingVisibleToBuyers(sql: Sql, l = "l"): Fragment {
  return sql`(${publicListingRecord(sql, l)} AND ${listingInVisibleStatus(sql, l)})`;
}

/** A public listing record that left the market (SOLD, ARCHIVED): its page answers 410 with similar listings. */
export function listingGoneForBuyers(sql: Sql, l = "l"): Fragment {
  return sql`(${publicListingRecord(sql, l)} AND ${sql(l)}.status = ANY(${GONE_STATUSES}))`;
}

/**
 * The search index's part of the same rule: every buyers' search query carries these filter clauses. Test
 * records are never written to the index (the indexer applies isVisibleToBuyers), and each hit is checked again
 * with listingVisibleToBuyers (listing-search.ts), as the index lags PostgreSQL.
 */
export function buyerSearchFilter(): unknown[] {
  return [{ terms: { status: VISIBLE_STATUSES } }];
}
