// Consumer groups for tests on shared Kafka topics.
import type { Kafka } from "kafkajs";
import { ALL_TOPICS } from "@pss/contracts";
import { ensureTopics } from "@pss/service-kit";

/**
 * Commits the group's offsets at the topics' current ends, so it reads only what is produced from now on.
 * Topics created a moment ago may still be electing leaders: retriable errors are retried for a while. The
 * contract's topics are created first when missing: on a fresh Kafka a test may run before any service made them.
 */
export async function startGroupAtEnd(
  kafka: Kafka,
  groupId: string,
  topics: readonly string[],
  timeoutMs = 30_000,
): Promise<void> {
  const known = ALL_TOPICS.filter((t) => topics.includes(t.name));
  if (known.length > 0) await ensureTopics(kafka, known);
  const deadline = Date.now() + timeoutMs;
  const admin = kafka.admin();
  await admin.connect();
  try {
    for (const topic of topics) {
      for (;;) {
        try {
          const ends = await admin.fetchTopicOffsets(topic);
          await admin.setOffsets({
            groupId,
            topic,
            partitions: ends.map((p) => ({ partition: p.partition, offset: p.high })),
          });
          break;
        } catch (err) {
          if (!(err as { retriable?: boolean }).retriable || Date.now() > deadline) throw err;
          await Bun.sleep(250);
        }
      }
    }
  } finally {
    await admin.disconnect();
  }
}

/**
 * The same for several groups at once, each with all its topics in one step: a consumer of the group joins it,
 * commits the topics' current ends and leaves (kafkajs's setOffsets, above, takes one topic per join and waits
 * for a fetch, ~5 s each). For groups whose topics exist and that no process runs yet.
 */
export async function startGroupsAtEnd(
  kafka: Kafka,
  groups: Record<string, readonly string[]>,
  timeoutMs = 30_000,
): Promise<void> {
  const topics = [...new Set(Object.values(groups).flat())];
  await ensureTopics(
    kafka,
    ALL_TOPICS.filter((t) => topics.includes(t.name)),
  );
  const admin = kafka.admin();
  const ends = new Map(
    await admin
      .connect()
      .then(() => Promise.all(topics.map(async (t) => [t, await admin.fetchTopicOffsets(t)] as const)))
      .finally(() => admin.disconnect()),
  );
  await Promise.all(
    Object.entries(groups).map(async ([groupId, groupTopics]) => {
      const consumer = kafka.consumer({ groupId, allowAutoTopicCreation: false });
      let timer: Timer | undefined;
      try {
        await consumer.connect();
        await consumer.subscribe({ topics: [...groupTopics], fromBeginning: false });
        const joined = new Promise<void>((resolve, reject) => {
          consumer.on(consumer.events.GROUP_JOIN, () => resolve());
          timer = setTimeout(() => reject(new Error(`group ${groupId} not joined within ${timeoutMs} ms`)), timeoutMs);
        });
        await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, eachBatch: async () => {} });
        consumer.pause(groupTopics.map((topic) => ({ topic })));
        await joined;
        await consumer.commitOffsets(
          groupTopics.flatMap((topic) =>
            ends.get(topic)!.map((p) => ({ topic, partition: p.partition, offset: p.high })),
          ),
        );
      } finally {
        clearTimeout(timer);
        await consumer.disconnect();
      }
    }),
  );
}
