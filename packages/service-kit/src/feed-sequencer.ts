// Numbers the change feed: one pass at a time (a transaction advisory lock, so any number of API instances may
// run it and one pass runs at once; transaction-scoped, so it works through a transaction-pooling PgBouncer).
// A pass takes the feed drafts committed and not numbered yet (migration 0033: each outbox writer stores its row's
// feed events beside it, feed-drafts.ts), in outbox ID order, gives each the next number of its partner's and
// mode's sequence and deletes the drafts, in ONE set-based statement; the outbox is neither read nor updated.
// Outbox rows a previous release's writer marked feed_pending are first turned into drafts (the old decoding,
// a rare fallback during a rolling upgrade), in the same transaction.
//
// Why a reader following the sequence never passes over a committed change: numbers are given only after the
// change committed (its drafts are visible), by one pass at a time, each pass numbering after the last number
// of the previous pass, and a pass's numbers become visible together when it commits. A transaction that commits
// late has nothing numbered yet; its drafts are found by the next pass (they are found by "not numbered yet", not
// by a position that could have moved past them) and get numbers after everything already given. So every number
// a reader can see is lower than every number given later, and the numbers of one partner and mode are
// consecutive. Per record, the order is its version order: a write to a record waits for the previous write's
// commit, so its outbox row (and ID) comes after the previous one's, which is visible no later than it; drafts
// and legacy rows are taken in that one ID order.
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
import { FEED_LEAD_EVENT_TYPES } from "@pss/contracts";
import type postgres from "postgres";
import type { Logger } from "./logger.ts";
import { feedDraftRows, feedDraftsInsert } from "./feed-drafts.ts";
import { createPeriodicJob } from "./periodic-job.ts";

/** Lock class of "numbering the change feed" (any constant no other code uses). */
export const FEED_SEQUENCER_LOCK = 727_023;
/** Lock class of "removing old feed events": one chunk at a time across every process. */
export const FEED_PRUNE_LOCK = 727_024;

export interface FeedSequencerOptions {
  /** Drafts (and legacy outbox rows) per pass. */
  batchSize?: number;
  /** Pause after a pass that found nothing to do. */
  idlePollMs?: number;
  /** Events older than this are removed (at least FEED_RETENTION_DAYS). */
  retentionDays: number;
  /** How often old events are looked for. */
  pruneIntervalMs?: number;
  /** Events removed per transaction (default 5,000). */
  pruneChunkSize?: number;
  /** stop() numbers the drafts already written for at most this long (default 5 s). */
  stopDrainMs?: number;
}

export interface FeedSequencer {
  /** One pass: drafts numbered plus legacy rows taken (0 when another instance holds the lock or nothing waits). */
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
  const stopDrainMs = opts.stopDrainMs ?? 5_000;

  const runOnce = (): Promise<number> => sql.begin((tx) => numberFeedPass(tx, batchSize));

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

  // On stop, the drafts already written are numbered before the process goes (bounded): when the last sequencer
  // of this release stops (a rollback to one whose sequencer does not read feed_drafts, docs/upgrades.md), no
  // draft is left behind. Other sequencers running meanwhile number them too; this only waits for that.
  async function drainOnStop(): Promise<void> {
    const deadline = Date.now() + stopDrainMs;
    const [last] = await sql`SELECT max(outbox_id)::text AS through FROM feed_drafts`;
    if (!last?.through) return;
    while (Date.now() < deadline) {
      if ((await runOnce()) > 0) continue;
      const [left] =
        await sql`SELECT EXISTS (SELECT 1 FROM feed_drafts WHERE outbox_id <= ${last.through}::bigint) AS waiting`;
      if (!left!.waiting) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    logger.warn("feed sequencer stopped with drafts not numbered yet; another sequencer numbers them", {
      through: last.through,
    });
  }

  let started = false;
  return {
    runOnce,
    prune,
    start: () => {
      started = true;
      job.start();
      pruneJob.start();
    },
    stop: async () => {
      await Promise.all([job.stop(), pruneJob.stop()]);
      if (!started) return;
      started = false;
      await drainOnStop().catch((err: unknown) =>
        logger.warn("feed sequencer could not number the last drafts on stop", { error: String(err) }),
      );
    },
  };
}

/**
 * One numbering pass in the caller's transaction, under the sequencer's lock (0 when another transaction holds it):
 * a previous release's feed_pending rows drafted first, then up to `batchSize` drafts numbered. The feed sequencer's
 * own passes are this alone in a transaction; the outbox relay runs it in the transaction that deletes what Kafka
 * acknowledged (outbox-relay.ts), so a busy feed is numbered without a commit of its own.
 */
export async function numberFeedPass(tx: postgres.TransactionSql, batchSize = 500): Promise<number> {
  const [lock] = await tx`SELECT pg_try_advisory_xact_lock(${FEED_SEQUENCER_LOCK}) AS held`;
  if (!lock!.held) return 0;
  const legacy = await draftLegacyRows(tx, batchSize);
  return legacy + (await numberDrafts(tx, batchSize));
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

/**
 * The fallback for outbox rows a previous release's writer marked feed_pending (v1.0.0, during a rolling upgrade
 * or after a rollback): their feed events are built as before (the stored envelope joined to its change-history
 * row), stored as drafts under their row's ID and the rows unmarked, all in the caller's transaction under the
 * sequencer's lock. Returns how many rows it took. Nothing to do: one probe of an empty partial index.
 */
async function draftLegacyRows(tx: postgres.TransactionSql, batchSize: number): Promise<number> {
  const rows = await tx`
    SELECT o.id::text AS id, o.payload, coalesce(lh.changes, bh.changes) AS changes, lh.status_from, lh.status_to
    FROM (SELECT id, payload FROM outbox WHERE feed_pending ORDER BY id LIMIT ${batchSize}) o
    -- CASE, not AND: other events' aggregate IDs need not be numbers, and only CASE fixes the order of evaluation.
    LEFT JOIN listing_history lh ON lh.listing_id = CASE WHEN o.payload->>'type' = 'listing.upserted' THEN (o.payload->>'aggregateId')::bigint END
      AND lh.version = CASE WHEN o.payload->>'type' = 'listing.upserted' THEN (o.payload->>'version')::int END
    LEFT JOIN broker_history bh ON bh.broker_id = CASE WHEN o.payload->>'type' = 'broker.upserted' THEN (o.payload->>'aggregateId')::bigint END
      AND bh.version = CASE WHEN o.payload->>'type' = 'broker.upserted' THEN (o.payload->>'version')::int END
    ORDER BY o.id`;
  if (rows.length === 0) return 0;
  const drafts = feedDraftRows(
    rows.map((r) => ({ envelope: r.payload, changes: r.changes, statusFrom: r.status_from, statusTo: r.status_to })),
  );
  const ids = rows.map((r) => r.id as string);
  await tx`
    WITH x AS (SELECT * FROM unnest(${ids}::bigint[]) WITH ORDINALITY AS x(id, event)),
    u AS (UPDATE outbox SET feed_pending = NULL WHERE id IN (SELECT id FROM x))
    ${feedDraftsInsert(tx, drafts, "x")}`;
  return ids.length;
}

/**
 * Numbers up to `batchSize` drafts, oldest outbox row first, in ONE statement: each partner-and-mode's head row is
 * raised by its count of events (both audiences) in (partner, mode) order, as retention locks them, so the two
 * never wait on each other in a cycle; the events are inserted at the head's previous number plus their rank
 * (row_number over the same order, a running count of the non-lead ones for record_seq); the drafts are deleted.
 * A partner that is gone gets no head row, so its drafts are dropped unnumbered. Drafts after an outbox row still
 * marked feed_pending wait, as seen in this statement's own snapshot (a previous release's row the fallback's
 * batch did not reach, or that committed after it looked): the next pass drafts that row first, so both kinds
 * keep one outbox order. Returns how many drafts were taken.
 */
async function numberDrafts(tx: postgres.TransactionSql, batchSize: number): Promise<number> {
  const [done] = await tx`
    WITH d AS (
      SELECT outbox_id, ordinal, partner_id, mode, type, event_id, record_type, version, data, occurred_at,
        type = ANY(${FEED_LEAD_EVENT_TYPES as string[]}::text[]) AS lead
      FROM feed_drafts
      WHERE outbox_id < coalesce((SELECT min(id) FROM outbox WHERE feed_pending), 9223372036854775807)
      ORDER BY outbox_id, ordinal LIMIT ${batchSize}
    ), ranked AS (
      SELECT d.*, row_number() OVER w AS n_all, count(*) FILTER (WHERE NOT d.lead) OVER w AS n_records
      FROM d WINDOW w AS (PARTITION BY partner_id, mode ORDER BY outbox_id, ordinal ROWS UNBOUNDED PRECEDING)
    ), counts AS (
      SELECT partner_id, mode, count(*) AS n, count(*) FILTER (WHERE NOT lead) AS r FROM d GROUP BY partner_id, mode
    ), heads AS (
      INSERT INTO partner_feed_heads AS h (partner_id, mode, last_seq, last_record_seq)
      SELECT c.partner_id, c.mode, c.n, c.r FROM counts c
      WHERE EXISTS (SELECT 1 FROM partners p WHERE p.id = c.partner_id)
      ORDER BY c.partner_id, c.mode
      ON CONFLICT (partner_id, mode) DO UPDATE SET last_seq = h.last_seq + EXCLUDED.last_seq, last_record_seq = h.last_record_seq + EXCLUDED.last_record_seq
      RETURNING h.partner_id, h.mode, h.last_seq, h.last_record_seq
    ), numbered AS (
      INSERT INTO partner_feed (partner_id, mode, seq, record_seq, type, event_id, record_type, version, data, occurred_at)
      SELECT r.partner_id, r.mode, h.last_seq - c.n + r.n_all,
        CASE WHEN r.lead THEN NULL ELSE h.last_record_seq - c.r + r.n_records END,
        r.type, r.event_id, r.record_type, r.version, r.data, r.occurred_at
      FROM ranked r
      JOIN counts c ON c.partner_id = r.partner_id AND c.mode = r.mode
      JOIN heads h ON h.partner_id = r.partner_id AND h.mode = r.mode
    ), gone AS (
      DELETE FROM feed_drafts f USING d WHERE f.outbox_id = d.outbox_id AND f.ordinal = d.ordinal
    )
    SELECT count(*)::int AS n FROM d`;
  return done!.n as number;
}
