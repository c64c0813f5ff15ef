// The media service as a factory: the Kafka consumer, the worker pools, the retry loop and the garbage collector,
// wired from config and the clients main.ts (or a test) created.
import { Topics } from "@pss/contracts";
import {
  createEventConsumer,
  createMediaStorage,
  type ConsumerMetrics,
  type Logger,
  type MediaStorage,
  type OutageBackoff,
  type OutageMetrics,
  type Tracing,
} from "@pss/service-kit";
import type { Kafka } from "@pss/service-kit";
import type postgres from "postgres";
import type { MediaConfig } from "./config.ts";
import { createImageDownloader, type Resolver } from "./download/image-downloader.ts";
import { createGarbageCollector, type GarbageCollector } from "./gc/garbage-collector.ts";
import { createImageProcessor } from "./images/image-processor.ts";
import { createClaimKeeper } from "./jobs/claim-keeper.ts";
import { createMediaEventHandler } from "./jobs/media-event-handler.ts";
import { createMediaJobs, emptyStats, type MediaStats } from "./jobs/media-jobs.ts";
import { createMediaRepository } from "./jobs/media-repository.ts";
import { createRetryLoop, type RetryLoop } from "./jobs/retry-loop.ts";
import { createWorkPool } from "./jobs/work-pool.ts";
import type { MediaMetrics } from "./media-metrics.ts";

/** What the service reads of its config: the clients are made in main.ts, but the group's session timing is its own. */
export type MediaServiceConfig = Omit<MediaConfig, "healthPort" | "logLevel" | "postgres" | "kafka"> & {
  kafka?: Pick<MediaConfig["kafka"], "consumer">;
};

export interface MediaServiceDeps {
  config: MediaServiceConfig;
  sql: postgres.Sql;
  kafka: Kafka;
  logger: Logger;
  storage?: MediaStorage;
  resolve?: Resolver;
  /** Confine this instance to these partners' records (tests and the benchmark share Kafka and PostgreSQL). */
  onlyPartners?: ReadonlySet<string>;
  /** Job outcomes (media-metrics.ts) and the consumer's (service-kit consumer-metrics.ts). */
  metrics?: { media: MediaMetrics; consumer: ConsumerMetrics };
  /** Waits on our own dependencies (service-kit outage-wait.ts). */
  outageMetrics?: OutageMetrics;
  /** Between tries of a dependency of ours that is down (default 1 s doubling to 30 s); tests shorten it. */
  outageBackoff?: OutageBackoff;
  /** Spans of the events it handles (service-kit tracing.ts); absent: nothing recorded. */
  tracing?: Tracing;
}

export interface MediaService {
  start(): Promise<void>;
  /** Stops intake, finishes the images in flight, commits offsets, stops the retry loop and the collector. */
  stop(): Promise<void>;
  isRunning(): boolean;
  stats(): MediaStats;
  storage: MediaStorage;
  gc: GarbageCollector;
  retries: RetryLoop;
}

/**
 * A claim outlives the slowest possible attempt (MEDIA_CLAIM_TIMEOUT_MS, by default the whole download plus a
 * minute), so no second worker starts on an image still in progress; the claims of an instance that died run out
 * after it and the retry loop of any instance takes them up.
 */
export function leaseMsFor(config: Pick<MediaServiceConfig, "claimTimeoutMs">): number {
  return config.claimTimeoutMs;
}

export function createMediaService(deps: MediaServiceDeps): MediaService {
  const { config } = deps;
  const logger = deps.logger.child({ component: "media" });
  const stats = emptyStats();
  const leaseMs = leaseMsFor(config);
  const repository = createMediaRepository(deps.sql);
  const storage = deps.storage ?? createMediaStorage(config.storage);
  const jobs = createMediaJobs({
    repository,
    storage,
    logger,
    stats,
    downloader: createImageDownloader({
      limits: {
        maxBytes: config.maxDownloadBytes,
        connectTimeoutMs: config.connectTimeoutMs,
        totalTimeoutMs: config.totalTimeoutMs,
        maxRedirects: 3,
      },
      allowedHosts: config.allowedHosts,
      resolve: deps.resolve,
    }),
    processor: createImageProcessor({ maxInputPixels: config.maxInputPixels }),
    downloadPool: createWorkPool(config.downloadConcurrency),
    cpuPool: createWorkPool(config.concurrency),
    maxAttempts: config.maxAttempts,
    retryBaseMs: config.retryBaseMs,
    metrics: deps.metrics?.media,
    outageMetrics: deps.outageMetrics,
    outageBackoff: deps.outageBackoff,
  });
  const consumer = createEventConsumer({
    kafka: deps.kafka,
    groupId: config.groupId,
    topics: [Topics.listingEvents.name, Topics.brokerEvents.name],
    deadLetterTopic: Topics.mediaDeadLetter.name,
    logger,
    // Enough partitions in flight to keep the pools busy; each waits only for its own images.
    partitionsConsumedConcurrently: Math.max(2, config.downloadConcurrency),
    metrics: deps.metrics?.consumer,
    session: deps.config.kafka?.consumer,
    tracing: deps.tracing,
    handle: createMediaEventHandler({ repository, jobs, logger, stats, leaseMs, onlyPartners: deps.onlyPartners }),
  });
  const retries = createRetryLoop({
    repository,
    jobs,
    logger,
    pollMs: config.retryPollMs,
    batchSize: config.concurrency * 2,
    leaseMs,
    partners: () => (deps.onlyPartners ? [...deps.onlyPartners] : null),
  });
  const claims = createClaimKeeper({ repository, working: jobs.working, leaseMs, logger });
  const gc = createGarbageCollector({
    sql: deps.sql,
    repository,
    storage,
    graceMs: config.gcGraceMs,
    intervalMs: config.gcIntervalMs,
    logger,
  });

  return {
    async start() {
      claims.start();
      await consumer.start();
      retries.start();
      gc.start();
    },
    async stop() {
      // Jobs waiting for the store or PostgreSQL give their claims back (attempt unspent) instead of holding up the stop.
      jobs.abandonWaits();
      await consumer.stop();
      await retries.stop();
      await claims.stop();
      await gc.stop();
    },
    isRunning: () => consumer.isRunning(),
    stats: () => ({ ...stats }),
    storage,
    gc,
    retries,
  };
}
