// Composition root: the only place that creates clients; runService (service-kit) boots, checks and stops them.
import { topicSpecs } from "@pss/contracts";
import { createKafka, createPostgres, describeMediaStorage, runService, startConsuming } from "@pss/service-kit";
import type { ServiceKit, ServiceParts } from "@pss/service-kit";
import { loadConfig } from "./config.ts";
import { configureSharp } from "./images/image-processor.ts";
import { createMediaMetrics } from "./media-metrics.ts";
import { createMediaService } from "./media-service.ts";

await runService({ name: "media", loadConfig, build });

function build(kit: ServiceKit<ReturnType<typeof loadConfig>>): ServiceParts {
  const { config, logger, metrics } = kit;
  const sql = createPostgres(config.postgres, { applicationName: "pss-media" });
  const kafka = createKafka(config.kafka, logger);
  configureSharp(config.sharpThreads);
  const consumer = kit.consumerMetrics();
  const media = createMediaService({
    tracing: kit.tracing,
    config,
    sql,
    kafka,
    logger,
    outageMetrics: kit.outageMetrics(),
    metrics: { media: createMediaMetrics({ metrics, sql, logger }), consumer },
  });
  return {
    clients: { sql, kafka },
    // Where variants go (the directory or the bucket): without it every image would wait for a retry.
    checks: { storage: { run: () => media.storage.check(), everyMs: 10_000, timeoutMs: 3000 } },
    topics: topicSpecs(config.kafka.topics),
    start: startConsuming(media),
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
