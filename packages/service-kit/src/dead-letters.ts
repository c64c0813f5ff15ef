// Reading and replaying dead letters (admin CLI `dlq list|show|replay`). A dead letter is the original message
// (key, value, headers) as the event consumer (event-consumer.ts) received it, plus headers saying why and
// where from. Reading never commits offsets: a throwaway consumer group starts at the wanted offsets and is
// deleted afterwards. Replaying publishes the original message again to its source topic and partition; the
// consumers' version checks make a repeated replay harmless.
import { randomUUID } from "node:crypto";
import type { IHeaders, Kafka, Producer } from "./kafka-client.ts";

/** The headers event-consumer.ts adds to a dead letter (the original message's own headers stay beside them). */
export const DEAD_LETTER_HEADERS = {
  reason: "x-dead-letter-reason",
  originalTopic: "x-original-topic",
  originalPartition: "x-original-partition",
  originalOffset: "x-original-offset",
  consumerGroup: "x-consumer-group",
  failedAt: "x-failed-at",
} as const;

/** Set on a replayed message: `<dead-letter topic>:<partition>:<offset>` it came from. */
export const REPLAYED_FROM_HEADER = "x-replayed-from";

export interface DeadLetter {
  /** Position in the dead-letter topic: what `dlq show --offset` and `dlq replay --offset` name. */
  partition: number;
  offset: string;
  failedAt: string | null;
  reason: string | null;
  consumerGroup: string | null;
  sourceTopic: string | null;
  sourcePartition: number | null;
  sourceOffset: string | null;
  key: string | null;
  /** Envelope fields when the value is an event envelope (it may not be: unparsable messages land here too). */
  event: { type: string | null; aggregateId: string | null; version: number | null; eventId: string | null } | null;
  bytes: number;
  /** Every header as text: the dead-letter ones and the original message's (request id, traceparent, …). */
  headers: Record<string, string>;
  value: Buffer | null;
}

function headerText(value: IHeaders[string]): string | undefined {
  if (value === undefined) return undefined;
  const one = Array.isArray(value) ? value[0] : value;
  return one === undefined ? undefined : one.toString();
}

function envelopeFields(value: Buffer | null): DeadLetter["event"] {
  if (!value) return null;
  try {
    const json = JSON.parse(value.toString("utf8")) as Record<string, unknown>;
    if (typeof json !== "object" || json === null || Array.isArray(json)) return null;
    const text = (v: unknown) => (typeof v === "string" ? v : null);
    return {
      type: text(json.type),
      aggregateId: text(json.aggregateId),
      version: typeof json.version === "number" ? json.version : null,
      eventId: text(json.eventId),
    };
  } catch {
    return null;
  }
}

export function toDeadLetter(
  partition: number,
  message: { offset: string; key: Buffer | null; value: Buffer | null; headers?: IHeaders },
): DeadLetter {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    const text = headerText(value);
    if (text !== undefined) headers[name] = text;
  }
  const H = DEAD_LETTER_HEADERS;
  const sourcePartition = headers[H.originalPartition] !== undefined ? Number(headers[H.originalPartition]) : NaN;
  return {
    partition,
    offset: message.offset,
    failedAt: headers[H.failedAt] ?? null,
    reason: headers[H.reason] ?? null,
    consumerGroup: headers[H.consumerGroup] ?? null,
    sourceTopic: headers[H.originalTopic] ?? null,
    sourcePartition: Number.isInteger(sourcePartition) && sourcePartition >= 0 ? sourcePartition : null,
    sourceOffset: headers[H.originalOffset] ?? null,
    key: message.key ? message.key.toString("utf8") : null,
    event: envelopeFields(message.value),
    bytes: message.value?.length ?? 0,
    headers,
    value: message.value,
  };
}

export interface ReadOptions {
  /** Only the message at this offset (of every partition that has it). */
  offset?: string;
  /** Otherwise the newest `limit` messages per partition (default 100). */
  limit?: number;
  /** Give up reading after this long (default 30 s). */
  timeoutMs?: number;
}

/** Reads a dead-letter topic up to its end as it was when called, oldest first; commits nothing. */
export async function readDeadLetters(kafka: Kafka, topic: string, opts: ReadOptions = {}): Promise<DeadLetter[]> {
  const limit = BigInt(opts.limit ?? 100);
  const admin = kafka.admin();
  await admin.connect();
  let ranges: { partition: number; start: bigint; end: bigint }[];
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    ranges = offsets
      .map((p) => {
        const low = BigInt(p.low);
        const high = BigInt(p.high);
        if (opts.offset !== undefined) {
          const at = BigInt(opts.offset);
          return { partition: p.partition, start: at, end: at >= low && at < high ? at + 1n : at };
        }
        return { partition: p.partition, start: high - limit > low ? high - limit : low, end: high };
      })
      .filter((r) => r.end > r.start);
  } finally {
    await admin.disconnect().catch(() => {});
  }
  if (ranges.length === 0) return [];

  const groupId = `pss-admin-dlq-${randomUUID()}`;
  const consumer = kafka.consumer({
    groupId,
    allowAutoTopicCreation: false,
    sessionTimeout: 10_000,
    heartbeatInterval: 1_000,
  });
  const found: DeadLetter[] = [];
  const remaining = new Map(ranges.map((r) => [r.partition, r]));
  const { promise: done, resolve, reject } = Promise.withResolvers<void>();
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const timer = setTimeout(
    () => reject(new Error(`could not read ${topic} to its end within ${timeoutMs / 1000} s`)),
    timeoutMs,
  );
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const range = remaining.get(batch.partition);
        if (!range) return;
        for (const message of batch.messages) {
          const offset = BigInt(message.offset);
          if (offset >= range.start && offset < range.end) found.push(toDeadLetter(batch.partition, message));
          if (offset >= range.end - 1n) {
            remaining.delete(batch.partition);
            break;
          }
        }
        if (remaining.size === 0) resolve();
      },
    });
    for (const r of ranges) consumer.seek({ topic, partition: r.partition, offset: r.start.toString() });
    await done;
  } finally {
    clearTimeout(timer);
    await consumer.disconnect().catch(() => {});
    // The group never committed anything; deleting it keeps the broker's group list clean.
    const cleanup = kafka.admin();
    await cleanup
      .connect()
      .then(() => cleanup.deleteGroups([groupId]))
      .catch(() => {})
      .finally(() => cleanup.disconnect().catch(() => {}));
  }
  return found.sort((a, b) => a.partition - b.partition || Number(BigInt(a.offset) - BigInt(b.offset)));
}

/** The original message's headers: the dead-letter ones removed, where it was replayed from added. */
export function replayHeaders(letter: DeadLetter, deadLetterTopic: string): Record<string, string> {
  const dropped = new Set<string>(Object.values(DEAD_LETTER_HEADERS));
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(letter.headers))
    if (!dropped.has(name) && name !== REPLAYED_FROM_HEADER) headers[name] = value;
  headers[REPLAYED_FROM_HEADER] = `${deadLetterTopic}:${letter.partition}:${letter.offset}`;
  return headers;
}

/**
 * Publishes each dead letter's original message to its source topic and partition (same key, value and
 * headers, so ordering per aggregate and the request id are kept). A letter without a source topic is refused.
 */
export async function replayDeadLetters(
  producer: Producer,
  deadLetterTopic: string,
  letters: DeadLetter[],
): Promise<void> {
  for (const letter of letters) {
    if (!letter.sourceTopic)
      throw new Error(`dead letter ${letter.partition}:${letter.offset} does not say which topic it came from`);
  }
  for (const letter of letters) {
    await producer.send({
      topic: letter.sourceTopic!,
      acks: -1,
      messages: [
        {
          key: letter.key,
          value: letter.value,
          headers: replayHeaders(letter, deadLetterTopic),
          ...(letter.sourcePartition !== null ? { partition: letter.sourcePartition } : {}),
        },
      ],
    });
  }
}
