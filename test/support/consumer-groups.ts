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
