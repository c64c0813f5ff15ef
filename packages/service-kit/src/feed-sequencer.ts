// Numbers the change feed: one pass at a time (a transaction advisory lock, so any number of API instances may
// run it and one pass runs at once; transaction-scoped, so it works through a transaction-pooling PgBouncer).
// A pass takes the outbox rows committed and not sequenced yet, in outbox ID order, turns them into feed events
// (feed-events.ts) and gives each the next number of its partner's and mode's sequence, then marks the rows done,
// all in one transaction.
//
// Why a reader following the sequence never passes over a committed change: numbers are given only after the
// change committed (its outbox row is visible), by one pass at a time, each pass numbering after the last number
// of the previous pass, and a pass's numbers become visible together when it commits. A transaction that commits
// late has nothing numbered yet; its rows are found by the next pass (they are found by "not sequenced yet", not
// by a position that could have moved past them) and get numbers after everything already given. So every number
// a reader can see is lower than every number given later, and the numbers of one partner and mode are
// consecutive. Per record, the order is its version order: a write to a record waits for the previous write's
// commit, so its outbox row (and ID) comes after the previous one's, which is visible no later than it.
//
// Two numberings per partner and mode (migration 0029): `seq` over every event (what keys with lead tracking
// read) and `record_seq` over the events without lead data (what keys without it read). Both are given in the same
// pass, so both are consecutive and in the same order; a lead event has no record_seq, so a reader of the records
// numbering sees no hole where a lead was.
//
// Retention runs on a loop of its own, in chunks of their own transactions: it never holds the numbering up, and a
// backlog after downtime goes a bounded chunk at a time. Each chunk deletes and raises pruned_through (both
// audiences) in one transaction, so in every snapshot each removed number is at most pruned_through; the feed
// route reads pruned_through and its page in one statement (one snapshot).
import { isLeadFeedEvent } from "@pss/contracts";
import type postgres from "postgres";
import type { Logger } from "./logger.ts";
import { feedEventsOf, type FeedEventDraft } from "./feed-events.ts";
import { createPeriodicJob } from "./periodic-job.ts";
import { sqlJson, sqlValues } from "./sql-values.ts";

/** Lock class of "numbering the change feed" (any constant no other code uses). */
export const FEED_SEQUENCER_LOCK = 727_023;
/** Lock class of "removing old feed events": one chunk at a time across every process. */
export const FEED_PRUNE_LOCK = 727_024;

export interface FeedSequencerOptions {
  /** Outbox rows per pass. */
  batchSize?: number;
  /** Pause after a pass that found nothing to do. */
  idlePollMs?: number;
  /** Events older than this are removed (at least FEED_RETENTION_DAYS). */
  retentionDays: number;
  /** How often old events are looked for. */
  pruneIntervalMs?: number;
  /** Events removed per transaction (default 5,000). */
  pruneChunkSize?: number;
}

export interface FeedSequencer {
  /** One pass: the number of outbox rows sequenced (0 when another instance holds the lock or nothing waits). */
  runOnce(): Promise<number>;
  /** Removes events older than the retention, one chunk per transaction; returns how many. */
  prune(): Promise<number>;
  start(): void;
  stop(): Promise<void>;
}

export function createFeedSequencer(
  deps: { sql: postgres.Sql; logger: Logger },
  opts: FeedSequencerOptions,
): FeedSequencer {
  const { sql, logger } = deps;
  const batchSize = opts.batchSize ?? 500;
  const idlePollMs = opts.idlePollMs ?? 100;
  const pruneIntervalMs = opts.pruneIntervalMs ?? 60_000;
  const pruneChunkSize = opts.pruneChunkSize ?? 5_000;

  async function runOnce(): Promise<number> {
    return sql.begin(async (tx) => {
      const [lock] = await tx`SELECT pg_try_advisory_xact_lock(${FEED_SEQUENCER_LOCK}) AS held`;
      if (!lock!.held) return 0;
      const rows = await tx`
        SELECT o.id, o.payload, coalesce(lh.changes, bh.changes) AS changes, lh.status_from, lh.status_to
        FROM (SELECT id, payload FROM outbox WHERE feed_pending ORDER BY id LIMIT ${batchSize}) o
        -- CASE, not AND: other events' aggregate IDs need not be numbers, and only CASE fixes the order of evaluation.
        LEFT JOIN listing_history lh ON lh.listing_id = CASE WHEN o.payload->>'type' = 'listing.upserted' THEN (o.payload->>'aggregateId')::bigint END
          AND lh.version = CASE WHEN o.payload->>'type' = 'listing.upserted' THEN (o.payload->>'version')::int END
        LEFT JOIN broker_history bh ON bh.broker_id = CASE WHEN o.payload->>'type' = 'broker.upserted' THEN (o.payload->>'aggregateId')::bigint END
          AND bh.version = CASE WHEN o.payload->>'type' = 'broker.upserted' THEN (o.payload->>'version')::int END
        ORDER BY o.id`;
      if (rows.length === 0) return 0;
      const drafts: FeedEventDraft[] = rows.flatMap((r) =>
        feedEventsOf({
          payload: r.payload,
          changes: r.changes,
          statusFrom: r.status_from,
          statusTo: r.status_to,
        }).filter((d) => isUuidLike(d.partnerId)),
      );
      if (drafts.length) {
        // Reserve each partner-and-mode's numbers (both audiences) in one statement, then insert the events with them.
        const counts = new Map<string, { all: number; records: number }>();
        for (const d of drafts) {
          const c = counts.get(`${d.partnerId} ${d.mode}`) ?? { all: 0, records: 0 };
          c.all += 1;
          if (!isLeadFeedEvent(d.type)) c.records += 1;
          counts.set(`${d.partnerId} ${d.mode}`, c);
        }
        const keys = [...counts.keys()].map((k) => k.split(" ") as [string, string]);
        const count = (k: [string, string]) => counts.get(`${k[0]} ${k[1]}`)!;
        // Head rows in (partner, mode) order, as the retention locks them: the two never wait on each other in a cycle.
        const heads = await tx`
          INSERT INTO partner_feed_heads AS h (partner_id, mode, last_seq, last_record_seq)
          SELECT x.partner_id, x.mode, x.n, x.r
          FROM unnest(${keys.map((k) => k[0])}::uuid[], ${keys.map((k) => k[1])}::text[], ${keys.map((k) => count(k).all)}::bigint[], ${keys.map((k) => count(k).records)}::bigint[]) AS x(partner_id, mode, n, r)
          WHERE EXISTS (SELECT 1 FROM partners p WHERE p.id = x.partner_id)
          ORDER BY x.partner_id, x.mode
          ON CONFLICT (partner_id, mode) DO UPDATE SET last_seq = h.last_seq + EXCLUDED.last_seq, last_record_seq = h.last_record_seq + EXCLUDED.last_record_seq
          RETURNING partner_id::text AS partner_id, mode, last_seq, last_record_seq`;
        const next = new Map<string, { seq: number; recordSeq: number }>();
        for (const h of heads) {
          const c = counts.get(`${h.partner_id} ${h.mode}`)!;
          next.set(`${h.partner_id} ${h.mode}`, {
            seq: Number(h.last_seq) - c.all + 1,
            recordSeq: Number(h.last_record_seq) - c.records + 1,
          });
        }
        const numbered = drafts.flatMap((d) => {
          const at = next.get(`${d.partnerId} ${d.mode}`);
          if (at === undefined) return []; // the partner is gone
          const seq = at.seq++;
          const recordSeq = isLeadFeedEvent(d.type) ? null : at.recordSeq++;
          return [
            {
              partner_id: d.partnerId,
              mode: d.mode,
              seq,
              record_seq: recordSeq,
              type: d.type,
              event_id: d.eventId,
              record_type: d.recordType,
              version: d.version,
              data: sqlJson(tx, d.data),
              occurred_at: new Date(d.occurredAt),
            },
          ];
        });
        for (let i = 0; i < numbered.length; i += 1000)
          await tx`INSERT INTO partner_feed ${sqlValues(tx, numbered.slice(i, i + 1000))}`;
      }
      await tx`UPDATE outbox SET feed_pending = NULL WHERE id = ANY(${rows.map((r) => r.id)}::bigint[])`;
      return rows.length;
    });
  }

  /** One chunk of retention in its own transaction. */
  const pruneChunk = () =>
    sql.begin((tx) => pruneFeedChunk(tx, { retentionDays: opts.retentionDays, chunkSize: pruneChunkSize }));

  async function prune(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await pruneChunk();
      total += n;
      if (n < pruneChunkSize) return total;
    }
  }

  // PostgreSQL away or a conflict: nothing was numbered (the pass rolled back); try again after a pause.
  const job = createPeriodicJob({
    name: "feed sequencer",
    logger,
    intervalMs: idlePollMs,
    backoff: { initialMs: 1000, maxMs: 1000 },
    failureMessage: "feed sequencer pass failed; retrying",
    async tick() {
      return (await runOnce()) >= batchSize;
    },
  });
  // Retention beside the numbering, never in its way: a full chunk means more is waiting (a backlog after
  // downtime), so the next chunk follows at once, each in a transaction of its own.
  const pruneJob = createPeriodicJob({
    name: "feed retention",
    logger,
    intervalMs: pruneIntervalMs,
    failureMessage: "feed retention chunk failed; retrying",
    async tick() {
      return (await pruneChunk()) >= pruneChunkSize;
    },
  });

  return {
    runOnce,
    prune,
    start: () => {
      job.start();
      pruneJob.start();
    },
    stop: async () => {
      await Promise.all([job.stop(), pruneJob.stop()]);
    },
  };
}

/**
 * Removes up to `chunkSize` events older than the retention, oldest first, and raises pruned_through of both
 * audiences to the highest numbers removed, in the caller's transaction (a reader sees both or neither). Returns
 * how many were removed; 0 also while another transaction is removing a chunk.
 */
export async function pruneFeedChunk(
  tx: postgres.TransactionSql,
  opts: { retentionDays: number; chunkSize: number },
): Promise<number> {
  const [lock] = await tx`SELECT pg_try_advisory_xact_lock(${FEED_PRUNE_LOCK}) AS held`;
  if (!lock!.held) return 0;
  const through = await tx`
    WITH doomed AS (
      SELECT partner_id, mode, seq FROM partner_feed
      WHERE sequenced_at < now() - ${opts.retentionDays}::int * interval '1 day'
      ORDER BY sequenced_at LIMIT ${opts.chunkSize}
    ), gone AS (
      DELETE FROM partner_feed f USING doomed d
      WHERE f.partner_id = d.partner_id AND f.mode = d.mode AND f.seq = d.seq
      RETURNING f.partner_id, f.mode, f.seq, f.record_seq
    )
    SELECT partner_id::text AS partner_id, mode, max(seq)::text AS seq, coalesce(max(record_seq), 0)::text AS record_seq, count(*)::int AS n
    FROM gone GROUP BY partner_id, mode ORDER BY partner_id, mode`;
  if (through.length === 0) return 0;
  // Head rows locked in (partner, mode) order, as the numbering takes them, then raised.
  const ids = through.map((t) => t.partner_id as string);
  const modes = through.map((t) => t.mode as string);
  await tx`
    SELECT 1 FROM partner_feed_heads h
    JOIN unnest(${ids}::uuid[], ${modes}::text[]) AS x(partner_id, mode) ON h.partner_id = x.partner_id AND h.mode = x.mode
    ORDER BY h.partner_id, h.mode FOR UPDATE OF h`;
  await tx`
    UPDATE partner_feed_heads h
    SET pruned_through = greatest(h.pruned_through, x.seq), record_pruned_through = greatest(h.record_pruned_through, x.record_seq)
    FROM unnest(${ids}::uuid[], ${modes}::text[], ${through.map((t) => t.seq as string)}::bigint[], ${through.map((t) => t.record_seq as string)}::bigint[]) AS x(partner_id, mode, seq, record_seq)
    WHERE h.partner_id = x.partner_id AND h.mode = x.mode`;
  return through.reduce((n, t) => n + (t.n as number), 0);
}

const isUuidLike = (s: unknown) =>
  typeof s === "string" && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);
