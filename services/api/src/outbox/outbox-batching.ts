// Pure decisions of the outbox relay: how many rows go into one Kafka request, and which Kafka errors mean
// "this row can never be published" (set it aside) rather than "try again later".
import { TRACE_HEADERS } from "@pss/service-kit";

export interface OutboxRow {
  id: string;
  topic: string;
  message_key: string;
  payload: string;
  /** The write's request ID and traceparent, sent as Kafka headers; null for rows written without a request. */
  request_id: string | null;
  traceparent: string | null;
  /** UTF-8 bytes of key + value + headers + RECORD_OVERHEAD_BYTES, as the relay's SELECT computes them. */
  bytes: number;
}

export interface BatchLimits {
  /** Bytes per Kafka request, summed over its rows (Kafka refuses a partition's batch over message.max.bytes). */
  maxBatchBytes: number;
  /** Largest single row the relay tries to send; larger ones are set aside without trying. */
  maxMessageBytes: number;
}

/** Kafka's record framing per message (length, attributes, deltas, key/value lengths, header count), upper bound. */
export const RECORD_OVERHEAD_BYTES = 32;

/** Framing of one record header (its name's and value's length varints), upper bound. */
export const HEADER_OVERHEAD_BYTES = 10;

/** Bytes a header adds to a record besides its value: its name and framing (the relay's SELECT adds the value). */
export const TRACE_HEADER_BYTES = {
  requestId: TRACE_HEADERS.requestId.length + HEADER_OVERHEAD_BYTES,
  traceparent: TRACE_HEADERS.traceparent.length + HEADER_OVERHEAD_BYTES,
} as const;

/** What the trace headers of a row add to its record (0 for a row without them). */
export function traceHeaderBytes(row: Pick<OutboxRow, "request_id" | "traceparent">): number {
  const size = (value: string | null, fixed: number) => (value === null ? 0 : Buffer.byteLength(value) + fixed);
  return size(row.request_id, TRACE_HEADER_BYTES.requestId) + size(row.traceparent, TRACE_HEADER_BYTES.traceparent);
}

// Kafka's defaults are 1,048,588 bytes (message.max.bytes per partition batch) and 1 MiB (producers'
// max.request.size): half of that per request leaves room for framing and for a topic with a smaller limit.
export const DEFAULT_MAX_BATCH_BYTES = 512 * 1024;
export const DEFAULT_MAX_MESSAGE_BYTES = 1_000_000;

export interface PlannedBatch {
  /** Rows to send now, in id order; their byte sum stays within maxBatchBytes unless it is one row alone. */
  send: OutboxRow[];
  /** Rows larger than maxMessageBytes: they are set aside, never sent. */
  tooLarge: OutboxRow[];
  /** True when rows were left for the next round because the byte limit was reached. */
  cut: boolean;
}

/** Takes rows (in id order) from the front until the byte limit; a row alone may use up to maxMessageBytes. */
export function planBatch(rows: readonly OutboxRow[], limits: BatchLimits): PlannedBatch {
  const send: OutboxRow[] = [];
  const tooLarge: OutboxRow[] = [];
  let bytes = 0;
  for (const row of rows) {
    if (row.bytes > limits.maxMessageBytes) {
      tooLarge.push(row);
      continue;
    }
    if (send.length > 0 && bytes + row.bytes > limits.maxBatchBytes) return { send, tooLarge, cut: true };
    send.push(row);
    bytes += row.bytes;
  }
  return { send, tooLarge, cut: false };
}

// Kafka error types that no retry can fix for the rows sent. Topic-scoped ones hold for every row of the topic.
const PERMANENT_FOR_ROW = new Set(["MESSAGE_TOO_LARGE", "RECORD_LIST_TOO_LARGE", "INVALID_RECORD", "POLICY_VIOLATION"]);
const PERMANENT_FOR_TOPIC = new Set(["TOPIC_AUTHORIZATION_FAILED", "INVALID_TOPIC_EXCEPTION"]);

export interface PermanentFailure {
  /** Kafka's error type and message, stored as the set-aside reason. */
  reason: string;
  /** "topic": every row of that topic would fail the same way; "rows": one of the rows sent is at fault. */
  scope: "rows" | "topic";
}

/**
 * Finds a Kafka protocol error with a permanent type anywhere in the error's cause chain (kafkajs wraps it in
 * KafkaJSNonRetriableError). Anything else (connection loss, leader moves, retries exhausted on a retriable
 * error, a missing topic) is transient: null.
 */
export function permanentKafkaFailure(err: unknown): PermanentFailure | null {
  const seen = new Set<unknown>();
  let current: unknown = err;
  while (current && typeof current === "object" && !seen.has(current)) {
    seen.add(current);
    const e = current as { type?: unknown; message?: unknown; name?: unknown; cause?: unknown };
    // kafkajs gave up retrying an error it considers retriable: not permanent, whatever it wraps.
    if (e.name === "KafkaJSNumberOfRetriesExceeded") return null;
    if (typeof e.type === "string" && (PERMANENT_FOR_ROW.has(e.type) || PERMANENT_FOR_TOPIC.has(e.type))) {
      const reason = `${e.type}: ${typeof e.message === "string" ? e.message : "refused by Kafka"}`.slice(0, 500);
      return { reason, scope: PERMANENT_FOR_TOPIC.has(e.type) ? "topic" : "rows" };
    }
    current = e.cause;
  }
  return null;
}

export interface PublishSteps {
  /** One Kafka request with these rows; throws what the producer throws. */
  send(rows: OutboxRow[]): Promise<void>;
  markSent(rows: OutboxRow[]): Promise<void>;
  setAside(rows: OutboxRow[], reason: string): Promise<void>;
}

/**
 * Sends rows in id order and marks them sent. On a permanent refusal the rows are halved until the refused
 * ones are found and set aside (a topic-wide refusal of a one-topic request sets its rows aside at once);
 * a transient error is thrown, leaving the unsent rows for the next attempt. Rows of a refused request that
 * reached other partitions are sent again: delivery stays at least once.
 */
export async function publishIsolatingRefusals(rows: OutboxRow[], steps: PublishSteps): Promise<void> {
  try {
    await steps.send(rows);
  } catch (err) {
    const failure = permanentKafkaFailure(err);
    if (!failure) throw err;
    const oneTopic = rows.every((r) => r.topic === rows[0]!.topic);
    if (rows.length === 1 || (failure.scope === "topic" && oneTopic)) return steps.setAside(rows, failure.reason);
    const half = Math.ceil(rows.length / 2);
    await publishIsolatingRefusals(rows.slice(0, half), steps);
    await publishIsolatingRefusals(rows.slice(half), steps);
    return;
  }
  await steps.markSent(rows);
}
