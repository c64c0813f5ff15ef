// Test mode (docs/sandbox.md): records written with a pss_test_… key are of mode "test", kept apart from the
// partner's live records and never shown to buyers. These are the shared rules every service applies.
import type { RecordMode } from "./http/common.ts";
import { BUYER_VISIBLE_STATUSES } from "./http/listing.ts";

/**
 * The mode of an event (`mode` on the envelope). An envelope without one was written before test mode existed and
 * is live. Anything else that is not exactly "live" is treated as not live: a consumer never lets a record it
 * cannot classify reach buyers.
 */
export function eventMode(envelope: { mode?: unknown }): RecordMode {
  return envelope.mode === undefined || envelope.mode === "live" ? "live" : "test";
}

/** Buyers may see a listing (search, public pages, sitemaps, leads) only if it is live and in a visible status. */
export function isVisibleToBuyers(listing: { status: string; mode: string }): boolean {
  return listing.mode === "live" && (BUYER_VISIBLE_STATUSES as readonly string[]).includes(listing.status);
}

const SQL_ALIAS = /^[a-z_][a-z0-9_]*$/;
const visibleStatusList = BUYER_VISIBLE_STATUSES.map((s) => `'${s}'`).join(", ");

/**
 * The same rule as SQL over the listings table under `alias`: `l.mode = 'live' AND l.status IN (…)`. The one
 * condition every buyer-facing query (pages, search checks, sitemaps, lead intake, the indexer) must include.
 * A constant text (the alias is checked), so it is safe to splice into a query (postgres: sql.unsafe).
 */
export function buyerVisibleListingSql(alias = "l"): string {
  if (!SQL_ALIAS.test(alias)) throw new Error(`not a table alias: ${alias}`);
  return `(${alias}.mode = 'live' AND ${alias}.status IN (${visibleStatusList}))`;
}

/** Brokers have no status: a broker's public profile exists only for live brokers. */
export function buyerVisibleBrokerSql(alias = "b"): string {
  if (!SQL_ALIAS.test(alias)) throw new Error(`not a table alias: ${alias}`);
  return `(${alias}.mode = 'live')`;
}

/** The mode an API key writes, from its prefix (pss_live_… / pss_test_…). */
export function keyModeOf(key: string): RecordMode {
  return key.startsWith("pss_test_") ? "test" : "live";
}
