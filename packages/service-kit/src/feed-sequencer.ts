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
import type postgres from "postgres";
import type { Logger } from "./logger.ts";
import { feedEventsOf, type FeedEventDraft } from "./feed-events.ts";
import { createPeriodicJob } from "./periodic-job.ts";
import { sqlJson, sqlValues } from "./sql-values.ts";

/** Lock class of "numbering the change feed" (any constant no other code uses). */
export const FEED_SEQUENCER_LOCK = 727_023;

export interface FeedSequencerOptions {
  /** Outbox rows per pass. */
  batchSize?: number;
  /** Pause after a pass that found nothing to do. */
  idlePollMs?: number;
  /** Events older than this are removed (at least FEED_RETENTION_DAYS). */
  retentionDays: number;
  /** How often old events are removed. */
  pruneIntervalMs?: number;
}

export interface FeedSequencer {
  /** One pass: the number of outbox rows sequenced (0 when another instance holds the lock or nothing waits). */
  runOnce(): Promise<number>;
  /** Removes events older than the retention; returns how many. */
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
        // Reserve each partner-and-mode's numbers in one statement, then insert the events with them.
        const counts = new Map<string, number>();
        for (const d of drafts)
          counts.set(`${d.partnerId} ${d.mode}`, (counts.get(`${d.partnerId} ${d.mode}`) ?? 0) + 1);
        const keys = [...counts.keys()].map((k) => k.split(" ") as [string, string]);
        const heads = await tx`
          INSERT INTO partner_feed_heads AS h (partner_id, mode, last_seq)
          SELECT x.partner_id, x.mode, x.n FROM unnest(${keys.map((k) => k[0])}::uuid[], ${keys.map((k) => k[1])}::text[], ${keys.map((k) => counts.get(`${k[0]} ${k[1]}`)!)}::bigint[]) AS x(partner_id, mode, n)
          WHERE EXISTS (SELECT 1 FROM partners p WHERE p.id = x.partner_id)
          ON CONFLICT (partner_id, mode) DO UPDATE SET last_seq = h.last_seq + EXCLUDED.last_seq
          RETURNING partner_id::text AS partner_id, mode, last_seq`;
        const next = new Map<string, number>();
        for (const h of heads)
          next.set(`${h.partner_id} ${h.mode}`, Number(h.last_seq) - counts.get(`${h.partner_id} ${h.mode}`)! + 1);
        const numbered = drafts.flatMap((d) => {
          const key = `${d.partnerId} ${d.mode}`;
          const seq = next.get(key);
          if (seq === undefined) return []; // the partner is gone
          next.set(key, seq + 1);
          return [
            {
              partner_id: d.partnerId,
              mode: d.mode,
              seq,
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

  async function prune(): Promise<number> {
    return sql.begin(async (tx) => {
      const gone = await tx`
        DELETE FROM partner_feed WHERE sequenced_at < now() - ${opts.retentionDays}::int * interval '1 day'
        RETURNING partner_id, mode, seq`;
      if (gone.length === 0) return 0;
      const through = new Map<string, number>();
      for (const g of gone)
        through.set(
          `${g.partner_id} ${g.mode}`,
          Math.max(through.get(`${g.partner_id} ${g.mode}`) ?? 0, Number(g.seq)),
        );
      for (const [key, seq] of through) {
        const [partnerId, mode] = key.split(" ");
        await tx`UPDATE partner_feed_heads SET pruned_through = greatest(pruned_through, ${seq}) WHERE partner_id = ${partnerId!}::uuid AND mode = ${mode!}`;
      }
      return gone.length;
    });
  }

  let lastPrune = 0;
  // PostgreSQL away or a conflict: nothing was numbered (the pass rolled back); try again after a pause.
  const job = createPeriodicJob({
    name: "feed sequencer",
    logger,
    intervalMs: idlePollMs,
    backoff: { initialMs: 1000, maxMs: 1000 },
    failureMessage: "feed sequencer pass failed; retrying",
    async tick() {
      const done = await runOnce();
      if (Date.now() - lastPrune > pruneIntervalMs) {
        lastPrune = Date.now();
        await prune();
      }
      return done >= batchSize;
    },
  });

  return {
    runOnce,
    prune,
    start: () => job.start(),
    stop: () => job.stop(),
  };
}

const isUuidLike = (s: unknown) =>
  typeof s === "string" && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);
