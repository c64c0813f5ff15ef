// The indexer as a factory over its clients: main.ts wires it for production, tests wire it to unique names.
import type { Client } from "@opensearch-project/opensearch";
import { Topics } from "@pss/contracts";
import {
  createEventConsumer,
  type ConsumerMetrics,
  type ConsumerSettings,
  type EventConsumer,
  type Logger,
  type Tracing,
} from "@pss/service-kit";
import type { Kafka } from "@pss/service-kit";
import type postgres from "postgres";
import { createIndexingHandler, type BatchHandler } from "./indexing/index-batch.ts";
import type { DescriptionRewriter } from "./rewriting/description-rewriter.ts";
import { createIndexEnsurer } from "./search-index/ensure-index.ts";

export interface IndexerDeps {
  kafka: Kafka;
  sql: postgres.Sql;
  opensearch: Client;
  alias: string;
  groupId: string;
  rewriter: DescriptionRewriter;
  logger: Logger;
  /** Group membership timing (KAFKA_SESSION_TIMEOUT_MS …). */
  session?: ConsumerSettings;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  metrics?: ConsumerMetrics;
  /** Only these partners' events (tests sharing Kafka topics with other databases); absent = all. */
  onlyPartners?: ReadonlySet<string>;
  /** Spans of the events it indexes (service-kit tracing.ts); absent: nothing recorded. */
  tracing?: Tracing;
}

export interface Indexer extends EventConsumer {
  /** The batch handler itself, for driving it without Kafka. */
  handleBatch: BatchHandler;
  /** Creates the index behind the alias if needed. */
  ensureIndex(): Promise<void>;
}

export function createIndexer(deps: IndexerDeps): Indexer {
  const ensureIndex = createIndexEnsurer(deps.opensearch, deps.alias, deps.logger);
  const handleBatch = createIndexingHandler({
    sql: deps.sql,
    opensearch: deps.opensearch,
    alias: deps.alias,
    rewriter: deps.rewriter,
    logger: deps.logger,
    ensureIndex,
  });
  const consumer = createEventConsumer({
    kafka: deps.kafka,
    groupId: deps.groupId,
    topics: [Topics.listingEvents.name, Topics.brokerEvents.name],
    deadLetterTopic: Topics.indexerDeadLetter.name,
    logger: deps.logger,
    metrics: deps.metrics,
    tracing: deps.tracing,
    handleBatch: deps.onlyPartners
      ? (items) => handleBatch(items.filter((i) => deps.onlyPartners!.has(i.event.partnerId)))
      : handleBatch,
    // Partitions are independent (ordering is per aggregate): overlap their database and OpenSearch round trips.
    partitionsConsumedConcurrently: 6,
    session: deps.session,
    initialBackoffMs: deps.initialBackoffMs ?? 200,
    // Short enough that the index converges within seconds once OpenSearch is back.
    maxBackoffMs: deps.maxBackoffMs ?? 5_000,
  });
  return {
    handleBatch,
    ensureIndex,
    async start() {
      // OpenSearch may be down at boot: the first batch tries again (and retries until it is back).
      await ensureIndex().catch((err) =>
        deps.logger.warn("search index not ready yet; will retry with the first batch", {
          err: (err as Error).message,
        }),
      );
      await consumer.start();
    },
    stop: () => consumer.stop(),
    isRunning: () => consumer.isRunning(),
  };
}
