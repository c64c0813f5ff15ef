// The fair baseline for batch upserts: the same rows, photos, status history, change history and outbox rows a
// batch of listing PUTs writes, driven straight from a PostgreSQL client in batches of `batchSize`: one read for
// the whole batch (the broker and the listings by external ID), then every item's write statement (the same
// statements as the single-write fair baseline, bench/lib/fair-baseline.ts) pipelined in one transaction. No
// HTTP, no JSON, no validation or merge code: what a well-written client of the database would do.
import type postgres from "postgres";
import { externalId, listingBody } from "./bodies.mjs";
import { insertCreated, readStored, writeUpdated } from "./fair-baseline.ts";
import { walMark, walSince, type WalUsed } from "./wal-meter.ts";

export interface BatchBaselineResult {
  /** Rows written per second. */
  rowsPerSecond: number;
  /** Latency of one batch (ms). */
  p50: number;
  p99: number;
  /** Rows written. */
  rows: number;
  /** WAL from the first batch to the last (before this run's outbox rows are removed). */
  wal: WalUsed;
}

export async function fairBatchBaseline(args: {
  sql: postgres.Sql;
  partnerId: string;
  brokerExternalId: string;
  concurrency: number;
  durationSeconds: number;
  batchSize: number;
  prefix: string;
  mode: "create" | "update";
  /** Updates: listings created beforehand under the same prefix (keys 0 … existing-1). */
  existing?: number;
}): Promise<BatchBaselineResult> {
  const { sql } = args;
  const [broker] =
    await sql`SELECT id::text AS id FROM brokers WHERE partner_id = ${args.partnerId} AND mode = 'live' AND external_id = ${args.brokerExternalId}`;
  const wal0 = await walMark(sql);
  const deadline = performance.now() + args.durationSeconds * 1000;
  const latencies: number[] = [];
  let next = 0;
  let rows = 0;
  async function worker(w: number) {
    let round = 0;
    while (performance.now() < deadline) {
      const started = performance.now();
      if (args.mode === "create") {
        const ns = Array.from({ length: args.batchSize }, () => next++);
        const keys = ns.map((n) => externalId(args.prefix, n));
        // The read a create makes: the broker and whether the listings exist.
        const [found] = await sql`
          SELECT (SELECT id::text FROM brokers WHERE partner_id = ${args.partnerId} AND mode = 'live' AND external_id = ${args.brokerExternalId}) AS broker_id,
                 (SELECT count(*)::int FROM listings WHERE partner_id = ${args.partnerId} AND mode = 'live' AND external_id = ANY(${keys}::text[])) AS existing`;
        if (found!.existing !== 0) throw new Error("fair batch baseline: a key exists already");
        await sql.begin((tx) =>
          Promise.all(
            ns.map((n, i) =>
              insertCreated(tx, {
                partnerId: args.partnerId,
                brokerId: broker!.id,
                key: keys[i]!,
                body: listingBody(args.brokerExternalId, n),
              }),
            ),
          ),
        );
      } else {
        // Writer w owns its own slice of keys: no two writers race on one row.
        const perWriter = Math.max(args.batchSize, Math.floor((args.existing ?? args.batchSize) / args.concurrency));
        const keys = Array.from({ length: args.batchSize }, (_, i) =>
          externalId(args.prefix, w * perWriter + ((round * args.batchSize + i) % perWriter)),
        );
        round++;
        const stored = await readStored(sql, args.partnerId, keys);
        await sql.begin((tx) =>
          Promise.all(
            keys.map((key) =>
              writeUpdated(tx, {
                key,
                stored: stored.get(key)!,
                brokerExternalId: args.brokerExternalId,
                mutate: (b) => void (b.financials.askingPrice = 100000 + round),
              }),
            ),
          ),
        );
      }
      rows += args.batchSize;
      latencies.push(performance.now() - started);
    }
  }
  const began = performance.now();
  await Promise.all(Array.from({ length: args.concurrency }, (_, w) => worker(w)));
  const seconds = (performance.now() - began) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))] ?? 0;
  const wal = await walSince(sql, wal0);
  await sql`DELETE FROM outbox WHERE topic = 'bench.baseline'`;
  return { rowsPerSecond: rows / seconds, p50: at(0.5), p99: at(0.99), rows, wal };
}
