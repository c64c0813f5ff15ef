// The buyer-facing description of listings about to be indexed: the stored rewrite while it is of the current
// description, else a fresh rewrite, stored for next time. One place for the indexer, the reconciler and reindex.
// A test listing's description (docs/sandbox.md) never leaves the process: it is rewritten by the deterministic
// rewriter, whatever the configured one is (it may be an external model).
import type postgres from "postgres";
import { storeOptimizedDescriptions, type StoredListingState } from "../indexing/listing-store.ts";
import type { ListingSource } from "../search-index/search-document.ts";
import { createDeterministicRewriter, type DescriptionRewriter } from "./description-rewriter.ts";

async function mapLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/** Rewrites run `concurrency` at a time (it matters for an LLM backend); the default is one after another. */
export async function buyerDescriptions(
  deps: { sql: postgres.Sql; rewriter: DescriptionRewriter; concurrency?: number },
  entries: { source: ListingSource; state: StoredListingState }[],
): Promise<Map<number, string | null>> {
  const local = createDeterministicRewriter();
  const out = new Map<number, string | null>();
  const fresh: { id: number; original: string; optimized: string }[] = [];
  await mapLimit(entries, deps.concurrency ?? 1, async ({ source, state }) => {
    const original = source.description;
    if (original === null) return void out.set(source.id, null);
    if (state.description === original && state.descriptionOptimized !== null)
      return void out.set(source.id, state.descriptionOptimized);
    const optimized = await (state.mode === "live" ? deps.rewriter : local).rewrite(original);
    out.set(source.id, optimized);
    fresh.push({ id: source.id, original, optimized });
  });
  await storeOptimizedDescriptions(deps.sql, fresh);
  return out;
}
