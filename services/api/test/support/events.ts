// Reads what actually reached a Kafka topic: waits until the outbox has nothing pending for the aggregate,
// then consumes the topic up to its current end, so "no second event" is a real observation.
import type { Kafka, KafkaMessage } from "kafkajs";
import type postgres from "postgres";
import { uniqueName } from "../../../../test/support/env.ts";

export interface Envelope {
  eventId: string;
  type: string;
  aggregateType: string;
  aggregateId: string;
  version: number;
  partnerId: string;
  occurredAt: string;
  payload: any;
}

export async function waitForOutboxDrained(sql: postgres.Sql, aggregateId: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const [row] =
      await sql`SELECT count(*)::int AS n FROM outbox WHERE message_key = ${aggregateId} AND published_at IS NULL`;
    if (row!.n === 0) return;
    await Bun.sleep(50);
  }
  throw new Error(`outbox rows for ${aggregateId} were not published within ${timeoutMs} ms`);
}

/**
 * Consumes a topic up to the end it has now, handing every message to `onMessage` (a fresh group, nothing
 * committed): from its beginning, or with `since` from the first message written at or after that instant (a
 * topic shared by every run on the same Kafka grows through the day; reading it all from the start is slower
 * the more other files and runs wrote, beyond any bound under load). Throws when the end is not reached within
 * `timeoutMs`.
 */
export async function readTopicToEnd(
  kafka: Kafka,
  topic: string,
  onMessage: (message: KafkaMessage) => void,
  { timeoutMs = 30_000, since }: { timeoutMs?: number; since?: Date } = {},
): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(topic);
  const starts = new Map(
    since
      ? (await admin.fetchTopicOffsetsByTimestamp(topic, since.getTime())).map((p) => [p.partition, Number(p.offset)])
      : [],
  );
  await admin.disconnect();
  const remaining = new Map(
    ends
      .filter((p) => Number(p.high) > Math.max(Number(p.low), starts.get(p.partition) ?? 0))
      .map((p) => [p.partition, Number(p.high)]),
  );
  if (remaining.size === 0) return;

  const consumer = kafka.consumer({ groupId: uniqueName("topic-reader") });
  const { promise: done, resolve } = Promise.withResolvers<void>();
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachMessage: async ({ partition, message }) => {
      onMessage(message);
      const end = remaining.get(partition);
      if (end !== undefined && Number(message.offset) >= end - 1) remaining.delete(partition);
      if (remaining.size === 0) resolve();
    },
  });
  for (const partition of remaining.keys()) {
    const offset = starts.get(partition);
    if (offset !== undefined) consumer.seek({ topic, partition, offset: String(offset) });
  }
  const timer = setTimeout(resolve, timeoutMs);
  await done;
  clearTimeout(timer);
  await consumer.disconnect();
  if (remaining.size > 0) throw new Error(`did not reach the end of ${topic} within ${timeoutMs} ms`);
}

/**
 * The events this database's outbox published for the aggregate, as they are on the topic. Only events whose ID
 * is in `sql`'s outbox count: another database on the same Kafka (a developer's shared servers) can publish for
 * the same aggregate ID.
 */
export async function eventsOnTopic(
  kafka: Kafka,
  sql: postgres.Sql,
  topic: string,
  aggregateId: string,
  timeoutMs = 30_000,
): Promise<Envelope[]> {
  const rows = await sql`SELECT payload->>'eventId' AS id, created_at FROM outbox WHERE message_key = ${aggregateId}`;
  if (rows.length === 0) return [];
  const ours = new Set(rows.map((r) => r.id as string));
  // The relay publishes a row after it is written: nothing of ours is older than the oldest row (a minute's
  // margin for the clocks of the database and this host).
  const oldest = Math.min(...rows.map((r) => (r.created_at as Date).getTime()));
  const found: Envelope[] = [];
  await readTopicToEnd(
    kafka,
    topic,
    (message) => {
      if (message.key?.toString() !== aggregateId) return;
      const envelope = JSON.parse(message.value!.toString()) as Envelope;
      if (ours.has(envelope.eventId)) found.push(envelope);
    },
    { timeoutMs, since: new Date(oldest - 60_000) },
  );
  return found;
}

export interface RawMessage {
  key: string | null;
  value: string | null;
  headers: Record<string, string>;
}

/** The message at one position of a topic, with its headers as text. */
export async function messageAt(
  kafka: Kafka,
  topic: string,
  partition: number,
  offset: string,
  timeoutMs = 30_000,
): Promise<RawMessage> {
  const consumer = kafka.consumer({ groupId: uniqueName("message-reader") });
  const { promise: found, resolve, reject } = Promise.withResolvers<RawMessage>();
  const timer = setTimeout(
    () => reject(new Error(`no message at ${topic}/${partition}@${offset} within ${timeoutMs} ms`)),
    timeoutMs,
  );
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition: p, message }) => {
        if (p !== partition || message.offset !== offset) return;
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(message.headers ?? {}))
          if (value !== undefined) headers[name] = String(Array.isArray(value) ? value[0] : value);
        resolve({ key: message.key?.toString() ?? null, value: message.value?.toString() ?? null, headers });
      },
    });
    consumer.seek({ topic, partition, offset });
    return await found;
  } finally {
    clearTimeout(timer);
    await consumer.disconnect();
  }
}
