// Listings waiting for the index, on /metrics (docs/operations.md, "Metrics"): how many listings' index state is
// not settled (pending, or recorded for an older version) and how long ago the oldest of them was written. Read
// from PostgreSQL when Prometheus scrapes (partial index listings_index_unsettled, migration 0007; at most once
// per 5 s; left out while PostgreSQL does not answer).
import { gaugeFromSource, type Logger, type Metrics } from "@pss/service-kit";
import type postgres from "postgres";

export function registerIndexingGauges(deps: { metrics: Metrics; sql: postgres.Sql; logger: Logger }): void {
  const pending = deps.metrics.source(
    "listings-unindexed",
    async () => {
      const [row] = await deps.sql<{ n: number; oldest_seconds: number | null }[]>`
        SELECT count(*)::int AS n, extract(epoch FROM now() - min(updated_at))::float8 AS oldest_seconds
        FROM listings WHERE index_state = 'pending' OR indexed_version IS DISTINCT FROM version`;
      return { count: row!.n, oldestSeconds: Math.max(0, row!.oldest_seconds ?? 0) };
    },
    {
      maxAgeMs: 5_000,
      onError: (err) => deps.logger.debug("indexing metrics unavailable", { err: (err as Error).message }),
    },
  );
  gaugeFromSource(deps.metrics, {
    name: "indexer_listings_pending",
    help: "Listings whose search index state is not settled: pending, or recorded for an older version than the stored one",
    source: pending,
    samples: (p) => [{ value: p.count }],
  });
  gaugeFromSource(deps.metrics, {
    name: "indexer_listings_oldest_pending_age_seconds",
    help: "Time since the oldest listing not settled in the index was written; 0 when none waits",
    source: pending,
    samples: (p) => [{ value: p.oldestSeconds }],
  });
}
