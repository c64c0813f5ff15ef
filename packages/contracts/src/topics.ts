// Kafka topics: name, partition count and version live here so every service agrees.

export interface TopicSpec {
  name: string;
  partitions: number;
  replicationFactor?: number;
  /** The topic's min.insync.replicas (absent: the broker's default). */
  minInsyncReplicas?: number;
  retentionMs?: number;
}

const WEEK_MS = 7 * 24 * 3600 * 1000;

export const Topics = {
  listingEvents: { name: "pss.listing-events.v1", partitions: 6 },
  brokerEvents: { name: "pss.broker-events.v1", partitions: 6 },
  leadEvents: { name: "pss.lead-events.v1", partitions: 6 },
  /** Facts partners are told about by webhook (contracts/src/webhooks.ts), from the indexer, media and leads services. */
  partnerEvents: { name: "pss.partner-events.v1", partitions: 6 },
  mediaDeadLetter: { name: "pss.media.dead-letter.v1", partitions: 1, retentionMs: 4 * WEEK_MS },
  indexerDeadLetter: { name: "pss.indexer.dead-letter.v1", partitions: 1, retentionMs: 4 * WEEK_MS },
  leadsDeadLetter: { name: "pss.leads.dead-letter.v1", partitions: 1, retentionMs: 4 * WEEK_MS },
  webhooksDeadLetter: { name: "pss.webhooks.dead-letter.v1", partitions: 1, retentionMs: 4 * WEEK_MS },
} as const satisfies Record<string, TopicSpec>;

export const ALL_TOPICS: readonly TopicSpec[] = Object.values(Topics);

/** How topics are created: KAFKA_TOPIC_PARTITIONS and KAFKA_REPLICATION_FACTOR (every service reads them). */
export interface TopicSettings {
  /** Partitions of each event topic: the most instances of one consumer group that get work. */
  partitions: number;
  /** Copies of each partition; 3 on a production cluster, 1 on a single broker. */
  replicationFactor: number;
  /**
   * Copies that must have a write before it is acknowledged (writes use acks=all): 2 with 3 replicas, so one broker
   * may be lost without losing an acknowledged event. Absent: the broker's default.
   */
  minInsyncReplicas?: number;
}

export const DEFAULT_TOPIC_SETTINGS: TopicSettings = { partitions: 6, replicationFactor: 1 };

/**
 * Every topic as configured: event topics get `partitions` (dead-letter topics keep one: low volume, no
 * ordering to spread), all get `replicationFactor`.
 */
export function topicSpecs(settings: TopicSettings = DEFAULT_TOPIC_SETTINGS): TopicSpec[] {
  return ALL_TOPICS.map((t) => ({
    ...t,
    partitions: t.retentionMs === undefined ? settings.partitions : t.partitions,
    replicationFactor: settings.replicationFactor,
    ...(settings.minInsyncReplicas !== undefined ? { minInsyncReplicas: settings.minInsyncReplicas } : {}),
  }));
}
