// What the public search index may hold of a listing: the buyers' visibility rule (isVisibleToBuyers in
// @pss/contracts, the TypeScript form of services/marketplace/src/buyers/buyer-visibility.ts). One decision for the
// indexing handler, the reconciler and reindex.
//
// A test listing (docs/sandbox.md) is never written to the index, whatever its status: its index state is
// recorded as a live listing's would be (indexed or removed), so the partner's read-back behaves as live.
import { isBuyerVisible, isVisibleToBuyers, type RecordMode } from "@pss/contracts";

export type IndexAction =
  /** Write the listing's document. */
  | { kind: "index" }
  /** Remove its document (a live listing buyers may no longer see). */
  | { kind: "delete" }
  /** Touch nothing in the index; record `state` as the listing's index state (a test listing). */
  | { kind: "track"; state: "indexed" | "removed" };

/**
 * `mode`: the stored listing's; `eventMode`, when deciding on an event, the envelope's (eventMode()): a record
 * either side calls test never reaches the index.
 */
export function publicIndexAction(
  listing: { status: string; mode: RecordMode },
  eventMode: RecordMode = "live",
): IndexAction {
  if (listing.mode !== "live" || eventMode !== "live")
    return { kind: "track", state: isBuyerVisible(listing.status) ? "indexed" : "removed" };
  return isVisibleToBuyers(listing) ? { kind: "index" } : { kind: "delete" };
}
