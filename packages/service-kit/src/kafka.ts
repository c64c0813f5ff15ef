import type { Kafka } from "kafkajs";
import type { TopicSpec } from "@pss/contracts";

/** Creates missing topics with their explicit partition counts (the broker does not auto-create). */
export async function ensureTopics(kafka: Kafka, topics: readonly TopicSpec[]): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t.name));
    if (missing.length === 0) return;
    await admin.createTopics({
      waitForLeaders: true,
      topics: missing.map((t) => ({
        topic: t.name,
        numPartitions: t.partitions,
        replicationFactor: t.replicationFactor ?? 1,
        configEntries: t.retentionMs ? [{ name: "retention.ms", value: String(t.retentionMs) }] : [],
      })),
    });
  } catch (err) {
    // Another instance may have created some of them between list and create: fine if they all exist now.
    const now = new Set(await admin.listTopics());
    const stillMissing = topics.filter((t) => !now.has(t.name));
    if (stillMissing.length > 0) throw new Error(`could not create topics ${stillMissing.map((t) => t.name).join(", ")}: ${(err as Error).message}`);
  } finally {
    await admin.disconnect();
  }
}

/** Readiness probe: the cluster answers metadata requests. */
export async function pingKafka(kafka: Kafka): Promise<void> {
  const admin = kafka.admin({ retry: { retries: 0 } });
  await admin.connect();
  try {
    await admin.describeCluster();
  } finally {
    await admin.disconnect();
  }
}
