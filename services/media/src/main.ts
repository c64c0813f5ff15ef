// Composition root: the only place that creates clients; runService (service-kit) boots, checks and stops them.
import { topicSpecs } from "@pss/contracts";
import {
  createConsumerMetrics,
  createKafka,
  createOutageMetrics,
  createPostgres,
  describeMediaStorage,
  runService,
  type ServiceKit,
  type ServiceParts,
} from "@pss/service-kit";
import { loadConfig } from "./config.ts";
import { configureSharp } from "./images/image-processor.ts";
import { createMediaMetrics } from "./media-metrics.ts";
import { createMediaService } from "./media-service.ts";

await runService({ name: "media", loadConfig, build });

function build({ config, logger, metrics }: ServiceKit<ReturnType<typeof loadConfig>>): ServiceParts {
  const sql = createPostgres(config.postgres, { applicationName: "pss-media" });
  const kafka = createKafka(config.kafka, logger);
  configureSharp(config.sharpThreads);
  const consumer = createConsumerMetrics(metrics, {
    onError: (err) => logger.debug("consumer metrics unavailable", { err: (err as Error).message }),
  });
  const media = createMediaService({
    config,
    sql,
    kafka,
    logger,
    session: config.kafka.consumer,
    outageMetrics: createOutageMetrics(metrics, "media"),
    metrics: { media: createMediaMetrics({ metrics, sql, logger }), consumer },
  });
  return {
    clients: { sql, kafka },
    // Where variants go (the directory or the bucket): without it every image would wait for a retry.
    checks: { storage: { run: () => media.storage.check(), everyMs: 10_000, timeoutMs: 3000 } },
    topics: topicSpecs(config.kafka.topics),
    start: { what: "start consuming", run: () => media.start(), check: "consumer", isRunning: () => media.isRunning() },
    started: () =>
      logger.info("consuming", {
        groupId: config.groupId,
        concurrency: config.concurrency,
        downloadConcurrency: config.downloadConcurrency,
        ...describeMediaStorage(config.storage),
      }),
    // Stops fetching, lets the images in flight finish and be recorded, commits offsets, then stops retries and GC.
    stop: { "stop media consumer": () => media.stop() },
    shutdown: { stepTimeoutMs: config.totalTimeoutMs + 10_000 },
  };
}
