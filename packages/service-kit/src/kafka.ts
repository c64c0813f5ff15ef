import { recentConnectionError, type Kafka } from "./kafka-client.ts";
import type { TopicSpec } from "@pss/contracts";
import type { Logger } from "./logger.ts";

/**
 * Creates missing topics with their partition count and replication factor (the broker does not auto-create),
 * and grows a topic that has fewer partitions than configured (Kafka cannot shrink one; a topic with more is
 * left alone). Growing re-maps keys to partitions from then on: per-key order holds again once the events
 * produced before the change are consumed, and every consumer tolerates that window (versions, current rows).
 */
export async function ensureTopics(kafka: Kafka, topics: readonly TopicSpec[], logger?: Logger): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t.name));
    // Stated at boot: how many copies the cluster can keep (production wants 3: production-safety.ts).
    const copies = Math.max(1, ...topics.map((t) => t.replicationFactor ?? 1));
    const { brokers } = await admin.describeCluster();
    logger?.info("kafka cluster", { brokers: brokers.length, replicationFactor: copies });
    if (missing.length > 0 && brokers.length < copies)
      throw new Error(
        `KAFKA_REPLICATION_FACTOR=${copies} needs ${copies} brokers and the cluster has ${brokers.length}: add brokers, or set KAFKA_REPLICATION_FACTOR=${brokers.length} (with NODE_ENV=production also KAFKA_REPLICATION_FACTOR_I_UNDERSTAND=true)`,
      );
    if (missing.length > 0) {
      try {
        await admin.createTopics({
          waitForLeaders: true,
          topics: missing.map((t) => ({
            topic: t.name,
            numPartitions: t.partitions,
            replicationFactor: t.replicationFactor ?? 1,
            configEntries: [
              ...(t.retentionMs ? [{ name: "retention.ms", value: String(t.retentionMs) }] : []),
              ...(t.minInsyncReplicas ? [{ name: "min.insync.replicas", value: String(t.minInsyncReplicas) }] : []),
            ],
          })),
        });
      } catch (err) {
        // Another instance may have created some of them between list and create: fine if they all exist now.
        const now = new Set(await admin.listTopics());
        const stillMissing = topics.filter((t) => !now.has(t.name));
        if (stillMissing.length > 0)
          throw new Error(
            `could not create topics ${stillMissing.map((t) => t.name).join(", ")}: ${(err as Error).message}`,
          );
      }
    }
    const present = topics.filter((t) => existing.has(t.name));
    if (present.length === 0) return;
    const { topics: metadata } = await admin.fetchTopicMetadata({ topics: present.map((t) => t.name) });
    const grow = present.flatMap((t) => {
      const have = metadata.find((m) => m.name === t.name)?.partitions.length ?? t.partitions;
      return have < t.partitions ? [{ topic: t.name, count: t.partitions, from: have }] : [];
    });
    if (grow.length === 0) return;
    try {
      await admin.createPartitions({ topicPartitions: grow.map(({ topic, count }) => ({ topic, count })) });
      for (const g of grow)
        logger?.warn("topic grown to the configured partition count", { topic: g.topic, from: g.from, to: g.count });
    } catch (err) {
      // Two instances growing at once: the second finds the partitions there.
      const { topics: after } = await admin.fetchTopicMetadata({ topics: grow.map((g) => g.topic) });
      const short = grow.filter((g) => (after.find((m) => m.name === g.topic)?.partitions.length ?? 0) < g.count);
      if (short.length > 0)
        throw new Error(`could not grow topics ${short.map((g) => g.topic).join(", ")}: ${(err as Error).message}`);
    }
  } finally {
    await admin.disconnect();
  }
}

/**
 * Readiness probe: the cluster answers metadata requests within `timeoutMs`. One that runs out of time fails with
 * the connection error the client logged meanwhile, when there is one (a certificate refused, credentials
 * refused): kafkajs retries those connects itself, so the probe's own error would only say it took too long.
 */
export async function pingKafka(kafka: Kafka, timeoutMs = 1500): Promise<void> {
  const ping = (async () => {
    const admin = kafka.admin({ retry: { retries: 0 } });
    await admin.connect();
    try {
      await admin.describeCluster();
    } finally {
      await admin.disconnect();
    }
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(recentConnectionError(kafka) ?? new Error(`no answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  ping.catch(() => {}); // settles after a timeout too, unobserved
  try {
    await Promise.race([ping, late]);
  } finally {
    clearTimeout(timer);
  }
}
