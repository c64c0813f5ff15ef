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

/** The only mode whose records buyers may ever see. */
export const LIVE_MODE: RecordMode = "live";

/**
 * Buyers may see a listing (search, public pages, sitemaps, leads) only if it is live and in a visible status.
 * The TypeScript form of the one rule whose SQL form is services/marketplace/src/buyers/buyer-visibility.ts; the indexer
 * decides with it what goes into the public search index. Never decide on the status alone (isBuyerVisible):
 * that lets test records through.
 */
export function isVisibleToBuyers(listing: { status: string; mode: string }): boolean {
  return listing.mode === LIVE_MODE && (BUYER_VISIBLE_STATUSES as readonly string[]).includes(listing.status);
}

/** The mode an API key writes, from its prefix (pss_live_… / pss_test_…). */
export function keyModeOf(key: string): RecordMode {
  return key.startsWith("pss_test_") ? "test" : "live";
}
