// Rebuilds the search index from PostgreSQL while the old index keeps serving (admin CLI `reindex`):
//   1. note the snapshot horizon (xmin), create `<alias>-v<INDEX_VERSION>-<timestamp>` without the alias;
//   2. fill it with every buyer-visible listing, documents built exactly as the indexer builds them;
//   3. move the alias to it in one request (searches see the old index or the new one, never neither);
//   4. catch up: listings (or their brokers) written by transactions at or above the horizon may have changed
//      while the new index filled and the indexer wrote them to the old one; they are written again from
//      PostgreSQL. Anything committed later reaches the new index through the indexer, since the alias now
//      points there. External versions keep every write from replacing a newer document;
//   5. after a grace period for searches still running on the old index, drop it.
// One reindex per alias at a time (a lease in leader_leases, renewed while it runs).
import type { Client } from "@opensearch-project/opensearch";
import { createLeaderLease, openSearchBody, type Logger } from "@pss/service-kit";
import type postgres from "postgres";
import {
  loadListingsWrittenSince,
  loadVisibleListingsPage,
  type StoredListingState,
} from "../indexing/listing-store.ts";
import { publicIndexAction } from "../indexing/public-index-rule.ts";
import { createDeterministicRewriter, type DescriptionRewriter } from "../rewriting/description-rewriter.ts";
import { buyerDescriptions } from "../rewriting/buyer-descriptions.ts";
import { writeBulk, type IndexOperation } from "../search-index/bulk-writer.ts";
import { aliasTargets } from "../search-index/ensure-index.ts";
import { INDEX_MAPPINGS, INDEX_SETTINGS, versionedIndexName } from "../search-index/index-definition.ts";
import { createGazetteer } from "@pss/geo";
import { toSearchDocument, type ListingSource, type Locate } from "../search-index/search-document.ts";

export interface ReindexDeps {
  sql: postgres.Sql;
  opensearch: Client;
  alias: string;
  logger: Logger;
  /** For listings whose stored rewrite is missing or outdated (default: the deterministic rewrite). */
  rewriter?: DescriptionRewriter;
  /** Listings per page and bulk request. */
  pageSize?: number;
  /** How long searches that began on the old index get before it is dropped. */
  dropGraceMs?: number;
  /** Called after each page with the documents written so far. */
  onProgress?: (written: number) => void;
  /** Places a listing for distance search; absent: a gazetteer of this run's own. */
  locate?: Locate;
}

export interface ReindexResult {
  alias: string;
  index: string;
  /** Indexes the alias pointed at before, now dropped. */
  previous: string[];
  /** Buyer-visible listings written in the build. */
  documents: number;
  /** Listings written again after the swap because they changed meanwhile. */
  caughtUp: number;
  /** Listings OpenSearch refused (their ids and reasons); the rest of the index is complete. */
  rejected: { id: number; reason: string }[];
  tookMs: number;
}

export class ReindexError extends Error {
  override name = "ReindexError";
}

/** The lease "reindex:<alias>" (leader-lease.ts): a reindex that died blocks the next one for at most this. */
const LEASE_MS = 60_000;

function timestamp(now: Date): string {
  return now
    .toISOString()
    .replace(/[-:.TZ]/g, "")
    .slice(0, 17);
}

export async function reindex(deps: ReindexDeps): Promise<ReindexResult> {
  const started = performance.now();
  const { sql, opensearch: client, alias, logger } = deps;
  const pageSize = deps.pageSize ?? 500;
  const rewriter = deps.rewriter ?? createDeterministicRewriter();
  const locate = deps.locate ?? createGazetteer().locate;
  const log = logger.child({ component: "reindex", alias });

  const lease = createLeaderLease({ sql, name: `reindex:${alias}`, ttlMs: LEASE_MS });
  if (!(await lease.acquire())) throw new ReindexError(`another reindex of '${alias}' is running`);
  const stopRenewing = lease.keepRenewed();
  try {
    return await run();
  } finally {
    stopRenewing();
    await lease.release().catch(() => {});
  }

  function descriptions(entries: { source: ListingSource; state: StoredListingState }[]) {
    return buyerDescriptions({ sql, rewriter: rewriter }, entries);
  }

  /** Writes the entries' operations; answers how many documents it wrote. */
  async function write(
    index: string,
    entries: { source: ListingSource; state: StoredListingState }[],
    versionType: "external" | "external_gte",
    rejected: ReindexResult["rejected"],
  ): Promise<number> {
    // Test listings are never in the public index (docs/sandbox.md): no operation at all for them.
    const decided = entries.map((e) => ({
      ...e,
      action: publicIndexAction({ status: e.source.status, mode: e.state.mode }),
    }));
    const texts = await descriptions(decided.filter((e) => e.action.kind === "index"));
    const ops: IndexOperation[] = decided.flatMap(({ source, state, action }): IndexOperation[] =>
      action.kind === "index"
        ? [
            {
              kind: "index",
              id: source.id,
              version: source.version,
              versionType,
              document: toSearchDocument(source, state, texts.get(source.id) ?? null, locate),
            },
          ]
        : action.kind === "delete"
          ? [{ kind: "delete", id: source.id, version: source.version }]
          : [],
    );
    for (const outcome of await writeBulk(client, index, ops)) {
      if (outcome.result === "rejected") rejected.push({ id: outcome.op.id, reason: outcome.reason ?? "rejected" });
    }
    return ops.filter((op) => op.kind === "index").length;
  }

  async function run(): Promise<ReindexResult> {
    const previous = await aliasTargets(client, alias);
    const index = `${versionedIndexName(alias)}-${timestamp(new Date())}`;
    // Transactions at or above this ID may commit after (or during) the reads below: caught up after the swap.
    const [{ xmin }] = (await sql`SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin`) as unknown as [
      { xmin: string },
    ];
    // Refreshed once at the end instead of every half second while filling.
    await client.indices.create({
      index,
      body: openSearchBody({ settings: { ...INDEX_SETTINGS, refresh_interval: "-1" }, mappings: INDEX_MAPPINGS }),
    });
    log.info("reindex: new index created", { index, previous });
    const rejected: ReindexResult["rejected"] = [];
    let documents = 0;
    let swapped = false;
    try {
      for (let afterId = 0; ; ) {
        const page = await loadVisibleListingsPage(sql, afterId, pageSize);
        if (page.length === 0) break;
        documents += await write(index, page, "external", rejected);
        afterId = page[page.length - 1]!.source.id;
        deps.onProgress?.(documents);
      }
      await client.indices.putSettings({
        index,
        body: { index: { refresh_interval: INDEX_SETTINGS.refresh_interval } },
      });
      await client.indices.refresh({ index });

      const actions: unknown[] = previous.map((old) => ({ remove: { index: old, alias } }));
      actions.push({ add: { index, alias, is_write_index: true } });
      await client.indices.updateAliases({ body: openSearchBody({ actions }) });
      swapped = true;
      log.info("reindex: alias moved", { index, documents });
    } catch (err) {
      // Nothing points at the half-built index: remove it so a retry starts clean.
      if (!swapped) await client.indices.delete({ index }).catch(() => {});
      throw err;
    }

    // Same-version writes are accepted (external_gte): a broker's new name keeps the listing's version.
    const changed = await loadListingsWrittenSince(sql, xmin);
    for (let i = 0; i < changed.length; i += pageSize)
      await write(index, changed.slice(i, i + pageSize), "external_gte", rejected);
    await client.indices.refresh({ index });

    if (previous.length > 0) {
      await Bun.sleep(deps.dropGraceMs ?? 2000);
      await client.indices.delete({ index: previous.join(",") });
      log.info("reindex: previous index dropped", { previous });
    }
    const tookMs = Math.round(performance.now() - started);
    log.info("reindex done", { index, documents, caughtUp: changed.length, rejected: rejected.length, tookMs });
    return { alias, index, previous, documents, caughtUp: changed.length, rejected, tookMs };
  }
}
