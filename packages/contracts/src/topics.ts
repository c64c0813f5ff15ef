// Kafka topics: name, partition count and version live here so every service agrees.

export interface TopicSpec {
  name: string;
  partitions: number;
  replicationFactor?: number;
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
