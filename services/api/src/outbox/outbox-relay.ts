// Publishes outbox rows to Kafka in id order, then deletes them: one read and one DELETE per round, the payload
// read once (a retention for inspection is opt-in: retentionMs, OUTBOX_RETENTION_SECONDS). One relay is
// active at a time (it holds the lease "outbox-relay", a row in leader_leases; other instances stand by and take
// over within the lease's length when it dies, at once when it stops), which keeps every aggregate's events in order. A lease row rather than a
// session advisory lock: it works the same through a transaction-pooling PgBouncer (leader-lease.ts). If Kafka
// is down, rows wait and the API keeps accepting writes; they flow once Kafka answers again.
//
// Requests are bounded in bytes as well as rows (Kafka refuses a partition batch over message.max.bytes). A row
// Kafka can never take (too large, or refused permanently) is set aside with its reason and the rows after it
// go on; the aggregate's later events still flow, each carrying the whole state at a higher version, so
// consumers converge on the newest state and only the set-aside version is skipped (docs/events.md).
import type { Producer } from "@pss/service-kit";
import type postgres from "postgres";
import {
  createHeldLease,
  createLeaderLease,
  createPeriodicJob,
  disabledTracing,
  recordFailure,
  SpanKind,
  traceHeaders,
  traceparentOf,
  type Logger,
  type Span,
  type Tracing,
} from "@pss/service-kit";
import {
  DEFAULT_MAX_BATCH_BYTES,
  DEFAULT_MAX_MESSAGE_BYTES,
  planBatch,
  publishIsolatingRefusals,
  RECORD_OVERHEAD_BYTES,
  TRACE_HEADER_BYTES,
  type OutboxRow,
} from "./outbox-batching.ts";
import type { RelayMetrics } from "./outbox-metrics.ts";
import { createOutboxStatus, type OutboxBacklog } from "./outbox-status.ts";

/** The lease the active relay holds (leader_leases.name). */
export const RELAY_LEASE = "outbox-relay";
/** OUTBOX_RELAY_LEASE_SECONDS: how long a dead relay holds up publishing at most. */
export const DEFAULT_RELAY_LEASE_MS = 10_000;

export interface OutboxRelayOptions {
  /** Rows per Kafka request at most. */
  batchSize?: number;
  /** Bytes per Kafka request at most (keys, values and record framing); a larger single row goes alone. */
  maxBatchBytes?: number;
  /** A row larger than this is set aside without being sent. Keep it below the topics' max.message.bytes. */
  maxMessageBytes?: number;
  idlePollMs?: number;
  maxBackoffMs?: number;
  /**
   * 0 (the default): a sent row is deleted at once. More: sent rows are marked (published_at) and kept this long,
   * then deleted: for inspection (the test suites find what their database published by its outbox rows; an
   * operator debugging). Opt-in, since it costs an UPDATE per row, an outbox_published_at entry and a later DELETE.
   */
  retentionMs?: number;
  /** Length of the relay's lease: renewed every third of it; a relay that died is replaced after at most this. */
  leaseMs?: number;
  /** How often a standby relay tries to take the lease. */
  standbyPollMs?: number;
}

export interface OutboxRelay {
  start(): void;
  stop(): Promise<void>;
  /** Rows waiting, the oldest one's age, and rows set aside. */
  backlog(): Promise<OutboxBacklog>;
  /** This relay holds the lease and publishes (the others stand by). */
  isActive(): boolean;
}

/**
 * The event ID of a row's envelope, read from its text (the top-level "eventId" comes before the nested payload in
 * PostgreSQL's output, keys ordered by length): only for a log line or a recorded span, so no read of the row pays
 * for it in the database.
 */
export function eventIdOf(payload: string): string | null {
  return /"eventId": ?"([^"]{1,100})"/.exec(payload.slice(0, 512))?.[1] ?? null;
}

/** A W3C traceparent's sampled flag (the last field's lowest bit). */
const sampled = (traceparent: string): boolean => (Number.parseInt(traceparent.slice(-2), 16) & 1) === 1;

/**
 * The traceparent of a publish step nothing records: the same trace and flags, a span ID of its own (as an
 * unrecorded span of the tracing SDK would have, for a tenth of its cost), so the consumers' log lines still tell the
 * relay's step from the request's.
 */
function unrecordedChild(traceparent: string | null): string | null {
  const m = traceparent ? /^([0-9a-f]{2})-([0-9a-f]{32})-[0-9a-f]{16}-([0-9a-f]{2})$/.exec(traceparent) : null;
  if (!m) return traceparent;
  const id = crypto.getRandomValues(new Uint8Array(8));
  return `${m[1]}-${m[2]}-${Buffer.from(id).toString("hex")}-${m[3]}`;
}

const eventIdAttribute = (payload: string): { "pss.event_id"?: string } => {
  const id = eventIdOf(payload);
  return id ? { "pss.event_id": id } : {};
};

/**
 * The next rows to publish, in id order: at most `batchSize`, and only as many as fit in `maxBatchBytes`
 * (plus the first row whatever its size, so an oversized row at the head is seen and set aside).
 * `considered`: how many pending rows the byte cut looked at (more than returned means rows are waiting).
 */
export async function readPendingRows(
  sql: postgres.Sql | postgres.ReservedSql | postgres.TransactionSql,
  opts: { batchSize: number; maxBatchBytes: number },
): Promise<(OutboxRow & { considered: number })[]> {
  // payload::text goes to Kafka as it is: parsing and re-serialising it cost a third of the API's throughput.
  // The inner LIMIT keeps payload::text computed once per row, read through the outbox_pending index.
  // A row's bytes count its trace headers too (traceHeaderBytes in outbox-batching.ts says the same).
  const rows = await sql<(OutboxRow & { considered: string })[]>`
    SELECT id::text AS id, topic, message_key, payload, request_id, traceparent, bytes, considered FROM (
      SELECT *, sum(bytes) OVER (ORDER BY id) AS running, count(*) OVER () AS considered FROM (
        SELECT id, topic, message_key, payload, request_id, traceparent,
          octet_length(message_key) + octet_length(payload) + ${RECORD_OVERHEAD_BYTES}::int
            + coalesce(octet_length(request_id) + ${TRACE_HEADER_BYTES.requestId}::int, 0)
            + coalesce(octet_length(traceparent) + ${TRACE_HEADER_BYTES.traceparent}::int, 0) AS bytes
        FROM (SELECT id, topic, message_key, payload::text AS payload, request_id, traceparent FROM outbox
              WHERE published_at IS NULL AND set_aside_at IS NULL ORDER BY id LIMIT ${opts.batchSize}) pending
      ) sized
    ) summed
    WHERE running <= ${opts.maxBatchBytes}::bigint OR running = bytes
    ORDER BY summed.id`; // the bigint: a bare "id" would sort by the text alias, "1000" before "999"
  return rows.map((r) => ({ ...r, considered: Number(r.considered) }));
}

/**
 * What Kafka acknowledged leaves the outbox: deleted at once, or marked sent and kept `retentionMs` for inspection.
 * With `feedPass`, in one transaction with a pass of the change feed's numbering (numberFeedPass): the feed is
 * numbered without a commit (a WAL flush) of its own.
 */
export async function markSentRows(
  sql: postgres.Sql,
  sent: readonly Pick<OutboxRow, "id">[],
  retentionMs: number,
  feedPass?: (tx: postgres.TransactionSql) => Promise<unknown>,
): Promise<void> {
  const ids = sent.map((r) => r.id);
  const mark = (db: postgres.Sql | postgres.TransactionSql) =>
    retentionMs > 0
      ? db`UPDATE outbox SET published_at = now() WHERE id = ANY(${ids}::bigint[])`
      : // One statement: deleted, except a previous release's row the change feed has not numbered yet
        // (feed_pending, feed-sequencer.ts), which is marked sent and deleted by the cleanup once numbered. Both
        // parts see the same snapshot, so the rows marked are exactly those not deleted.
        db`
          WITH gone AS (DELETE FROM outbox WHERE id = ANY(${ids}::bigint[]) AND feed_pending IS NOT TRUE)
          UPDATE outbox SET published_at = now() WHERE id = ANY(${ids}::bigint[]) AND feed_pending`;
  if (!feedPass) {
    await mark(sql);
    return;
  }
  await sql.begin(async (tx) => {
    await mark(tx);
    await feedPass(tx);
  });
}

export function createOutboxRelay(
  deps: {
    sql: postgres.Sql;
    /**
     * Makes the producer the relay sends with; called again after a failed round. A new producer (a new producer
     * id): kafkajs rolls its idempotent sequence numbers back when a request fails, also when the broker wrote the
     * batch, so the old one's next batch could be refused as out of order for good (docs/operations.md, "Kafka
     * client behaviour under broker faults").
     */
    producer: () => Producer;
    logger: Logger;
    metrics?: RelayMetrics;
    tracing?: Tracing;
    /**
     * A pass of the change feed's numbering (numberFeedPass), run in the transaction of each round's delete, where
     * the feed sequencer runs beside the relay: one commit a round for both instead of one each.
     */
    feedPass?: (tx: postgres.TransactionSql) => Promise<unknown>;
  },
  opts: OutboxRelayOptions = {},
): OutboxRelay {
  const tracing = deps.tracing ?? disabledTracing("pss-outbox-relay");
  const batchSize = opts.batchSize ?? 500;
  const maxMessageBytes = opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const maxBatchBytes = opts.maxBatchBytes ?? Math.min(DEFAULT_MAX_BATCH_BYTES, maxMessageBytes);
  const limits = { maxBatchBytes, maxMessageBytes };
  const idlePollMs = opts.idlePollMs ?? 25;
  const maxBackoffMs = opts.maxBackoffMs ?? 5_000;
  const retentionMs = opts.retentionMs ?? 0;
  const leaseMs = opts.leaseMs ?? DEFAULT_RELAY_LEASE_MS;
  const standbyPollMs = opts.standbyPollMs ?? Math.min(2_000, Math.floor(leaseMs / 3));
  const log = deps.logger.child({ component: "outbox-relay" });
  const lease = createLeaderLease({ sql: deps.sql, name: RELAY_LEASE, ttlMs: leaseMs });
  const status = createOutboxStatus({ sql: deps.sql });
  let producer: Producer | null = null;

  async function setAside(rows: OutboxRow[], reason: string): Promise<void> {
    await deps.sql`UPDATE outbox SET set_aside_at = now(), set_aside_reason = ${reason} WHERE id = ANY(${rows.map((r) => r.id)}::bigint[]) AND published_at IS NULL`;
    deps.metrics?.setAside(rows.length);
    for (const row of rows) {
      // The payload stays in the table (it may be large); the key and size identify the event.
      log.error("outbox row set aside: Kafka can never accept it", {
        requestId: row.request_id,
        traceparent: row.traceparent,
        outboxId: row.id,
        topic: row.topic,
        key: row.message_key,
        bytes: row.bytes,
        reason,
      });
    }
  }

  /**
   * The relay's step of a write's trace: a producer span per row, a child of the span that wrote the row (its
   * traceparent), and the traceparent the message carries on. A row written without a trace gets none.
   */
  function publishSpan(row: OutboxRow): Span | null {
    // Nothing recorded (tracing off here, or the request's trace not sampled: its children are not either): no span
    // is made (send gives the message a span ID of its own all the same, unrecordedChild).
    if (!row.traceparent || !tracing.recording || !sampled(row.traceparent)) return null;
    const span = tracing.startSpan(`publish ${row.topic}`, { kind: SpanKind.PRODUCER, parent: row.traceparent });
    if (span.isRecording())
      span.setAttributes({
        "messaging.system": "kafka",
        "messaging.destination.name": row.topic,
        "messaging.kafka.message.key": row.message_key,
        "pss.outbox_id": row.id,
        ...eventIdAttribute(row.payload),
        ...(row.request_id ? { "pss.request_id": row.request_id } : {}),
      });
    return span;
  }

  async function send(rows: OutboxRow[]): Promise<void> {
    const byTopic = new Map<string, { key: string; value: string; headers: Record<string, string> }[]>();
    const spans: Span[] = [];
    for (const row of rows) {
      const list = byTopic.get(row.topic) ?? [];
      const span = publishSpan(row);
      if (span) spans.push(span);
      list.push({
        key: row.message_key,
        value: row.payload,
        headers: traceHeaders({
          requestId: row.request_id,
          traceparent: span ? traceparentOf(span) : unrecordedChild(row.traceparent),
        }),
      });
      byTopic.set(row.topic, list);
    }
    try {
      await producer!.sendBatch({
        acks: -1,
        topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
      });
    } catch (err) {
      for (const span of spans) recordFailure(span, err);
      throw err;
    } finally {
      for (const span of spans) span.end();
    }
  }

  /** One line per published event: the relay's step of the write's journey through the logs. */
  function logPublished(rows: OutboxRow[]): void {
    if (!log.enabled("info")) return;
    for (const row of rows) {
      log.info("event published", {
        requestId: row.request_id,
        traceparent: row.traceparent,
        eventId: eventIdOf(row.payload),
        outboxId: row.id,
        topic: row.topic,
        key: row.message_key,
        bytes: row.bytes,
      });
    }
  }

  /** One round; true when more rows are probably waiting (the round was full by rows or bytes). */
  async function publishRound(): Promise<boolean> {
    const rows = await readPendingRows(deps.sql, { batchSize, maxBatchBytes });
    if (rows.length === 0) return false;
    const considered = rows[0]!.considered;
    const plan = planBatch(rows, limits);
    for (const row of plan.tooLarge) {
      await setAside(
        [row],
        `MESSAGE_TOO_LARGE: ${row.bytes} bytes is more than the relay sends in one message (OUTBOX_MAX_MESSAGE_BYTES = ${maxMessageBytes})`,
      );
    }
    if (plan.send.length > 0) {
      if (!producer) {
        const fresh = deps.producer();
        await fresh.connect();
        producer = fresh;
      }
      await publishIsolatingRefusals(plan.send, {
        send,
        markSent: async (sent) => {
          await markSentRows(deps.sql, sent, retentionMs, deps.feedPass);
          deps.metrics?.published(sent.length);
          logPublished(sent);
        },
        setAside: (refused, reason) => setAside(refused, reason),
      });
    }
    return considered >= batchSize || rows.length < considered || plan.cut;
  }

  let lastCleanup = 0;
  /** One round under the lease; a failure drops the producer (a new one sends the next round). */
  async function tick(): Promise<boolean> {
    try {
      const more = await publishRound();
      if (Date.now() - lastCleanup > 60_000) {
        lastCleanup = Date.now();
        // Rows kept for inspection (retentionMs) and sent rows of a previous release's writer once numbered.
        // Uses outbox_published_at; set-aside rows are never deleted here.
        // Rows the change feed has not numbered yet stay (packages/service-kit/src/feed-sequencer.ts).
        await deps.sql`DELETE FROM outbox WHERE published_at < ${new Date(Date.now() - retentionMs)} AND feed_pending IS NOT TRUE`;
      }
      return more;
    } catch (err) {
      const failed = producer;
      producer = null;
      await failed?.disconnect().catch(() => {});
      throw err;
    }
  }

  // Every statement is a single autocommitted one on any pooled connection: nothing ties the relay to one.
  // The lease is renewed in the background, also while a round waits on Kafka; stopping hands it over at once.
  const job = createPeriodicJob({
    name: "outbox relay",
    logger: log,
    tick,
    intervalMs: idlePollMs,
    backoff: { initialMs: 200, maxMs: maxBackoffMs },
    failureMessage: "outbox relay failed; retrying",
    lease: createHeldLease({
      lease,
      logger: log,
      name: "outbox relay",
      fields: () => ({ maxBatchBytes, maxMessageBytes, batchSize, leaseMs }),
      onActive: (on) => deps.metrics?.active(on),
    }),
    standbyMs: standbyPollMs,
    dropLeaseOnFailure: true,
  });

  return {
    start: () => job.start(),
    async stop() {
      await job.stop();
      await producer?.disconnect().catch(() => {});
      producer = null;
    },
    backlog: () => status.backlog(),
    isActive: () => job.isRunning() && lease.isHeld(),
  };
}
