// Reads what actually reached a Kafka topic: waits until the outbox has nothing pending for the aggregate,
// then consumes the topic up to its current end, so "no second event" is a real observation.
import type { Kafka } from "kafkajs";
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
    const [row] = await sql`SELECT count(*)::int AS n FROM outbox WHERE message_key = ${aggregateId} AND published_at IS NULL`;
    if (row!.n === 0) return;
    await Bun.sleep(50);
  }
  throw new Error(`outbox rows for ${aggregateId} were not published within ${timeoutMs} ms`);
}

export async function eventsOnTopic(kafka: Kafka, topic: string, aggregateId: string, timeoutMs = 30_000): Promise<Envelope[]> {
  const admin = kafka.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  const remaining = new Map(ends.filter((p) => Number(p.high) > Number(p.low)).map((p) => [p.partition, Number(p.high)]));
  const found: Envelope[] = [];
  if (remaining.size === 0) return found;

  const consumer = kafka.consumer({ groupId: uniqueName("events-reader") });
  const { promise: done, resolve } = Promise.withResolvers<void>();
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachMessage: async ({ partition, message }) => {
      if (message.key?.toString() === aggregateId) found.push(JSON.parse(message.value!.toString()));
      const end = remaining.get(partition);
      if (end !== undefined && Number(message.offset) >= end - 1) remaining.delete(partition);
      if (remaining.size === 0) resolve();
    },
  });
  const timer = setTimeout(resolve, timeoutMs);
  await done;
  clearTimeout(timer);
  await consumer.disconnect();
  if (remaining.size > 0) throw new Error(`did not reach the end of ${topic} within ${timeoutMs} ms`);
  return found;
}
