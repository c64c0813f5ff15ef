// Consumer groups for tests on shared Kafka topics.
import type { Kafka } from "kafkajs";

/** Commits the group's offsets at the topics' current ends, so it reads only what is produced from now on. */
export async function startGroupAtEnd(kafka: Kafka, groupId: string, topics: readonly string[]): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    for (const topic of topics) {
      const ends = await admin.fetchTopicOffsets(topic);
      await admin.setOffsets({ groupId, topic, partitions: ends.map((p) => ({ partition: p.partition, offset: p.high })) });
    }
  } finally {
    await admin.disconnect();
  }
}
