// What reached Kafka between two moments: the topics' end offsets are read before and after, and every message
// in between is consumed. Topics are shared with other test runs, so callers filter by partner.
import type { Kafka } from "kafkajs";
import { uniqueName } from "../../../../test/support/env.ts";
import type { Envelope } from "./events.ts";

export type TopicEnds = Map<string, Map<number, number>>;

export async function topicEnds(kafka: Kafka, topics: string[]): Promise<TopicEnds> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const out: TopicEnds = new Map();
    for (const topic of topics)
      out.set(topic, new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)])));
    return out;
  } finally {
    await admin.disconnect();
  }
}

/** Every message written to the topics between `from` and `to` (end offsets), parsed. */
export async function messagesBetween(
  kafka: Kafka,
  from: TopicEnds,
  to: TopicEnds,
  timeoutMs = 60_000,
): Promise<(Envelope & { mode?: string; topic: string })[]> {
  const wanted = new Map<string, { partition: number; start: number; end: number }>();
  for (const [topic, ends] of to) {
    for (const [partition, end] of ends) {
      const start = from.get(topic)?.get(partition) ?? 0;
      if (end > start) wanted.set(`${topic}/${partition}`, { partition, start, end });
    }
  }
  const found: (Envelope & { mode?: string; topic: string })[] = [];
  if (wanted.size === 0) return found;
  const consumer = kafka.consumer({ groupId: uniqueName("range-reader") });
  const { promise: done, resolve } = Promise.withResolvers<void>();
  await consumer.connect();
  for (const topic of to.keys()) await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachMessage: async ({ topic, partition, message }) => {
      const range = wanted.get(`${topic}/${partition}`);
      if (!range) return;
      const offset = Number(message.offset);
      if (offset >= range.start && offset < range.end) found.push({ ...JSON.parse(message.value!.toString()), topic });
      if (offset >= range.end - 1) wanted.delete(`${topic}/${partition}`);
      if (wanted.size === 0) resolve();
    },
  });
  // Start each wanted partition at its first offset instead of reading the topic from the beginning.
  for (const [key, range] of wanted)
    consumer.seek({
      topic: key.slice(0, key.lastIndexOf("/")),
      partition: range.partition,
      offset: String(range.start),
    });
  const timer = setTimeout(resolve, timeoutMs);
  await done;
  clearTimeout(timer);
  await consumer.disconnect();
  if (wanted.size > 0) throw new Error(`did not read every message in the range within ${timeoutMs} ms`);
  return found;
}
