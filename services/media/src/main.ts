// Composition root: the only place that creates clients, wires dependencies and handles shutdown.
import { topicSpecs } from "@pss/contracts";
import {
  loadConfigOrExit,
  describeMediaStorage,
  startHealthServer,
  createKafka,
  createConsumerMetrics,
  createLogger,
  createMetrics,
  createOutageMetrics,
  createPostgres,
  createShutdown,
  ensureTopics,
  installCrashGuard,
  pingKafka,
  retryUntilDone,
} from "@pss/service-kit";
import { loadConfig } from "./config.ts";
import { configureSharp } from "./images/image-processor.ts";
import { createMediaMetrics } from "./media-metrics.ts";
import { createMediaService } from "./media-service.ts";

const config = loadConfigOrExit("media", loadConfig);

const logger = createLogger({ service: "media", level: config.logLevel });
installCrashGuard(logger);
const sql = createPostgres(config.postgres, { applicationName: "pss-media" });
const kafka = createKafka(config.kafka, logger);
configureSharp(config.sharpThreads);

const metrics = createMetrics({ service: "media" });
const media = createMediaService({
  config,
  sql,
  kafka,
  logger,
  session: config.kafka.consumer,
  outageMetrics: createOutageMetrics(metrics, "media"),
  metrics: { media: createMediaMetrics({ metrics, sql, logger }), consumer: createConsumerMetrics(metrics, { onError: (err) => logger.debug("consumer metrics unavailable", { err: (err as Error).message }) }) },
});

let stopping = false;
const health = startHealthServer({
  service: "media",
  port: config.healthPort,
  checks: {
    postgres: () => sql`SELECT 1`,
    // An admin connection per probe is not free: at most one every 10 s.
    kafka: { run: () => pingKafka(kafka), everyMs: 10_000, timeoutMs: 2000 },
    // Where variants go (the directory or the bucket): without it every image would wait for a retry.
    storage: { run: () => media.storage.check(), everyMs: 10_000, timeoutMs: 3000 },
    consumer: async () => {
      if (!media.isRunning()) throw new Error("not consuming");
    },
  },
  isStopping: () => stopping,
  metrics,
  onCheckFailure: (name, err) => logger.debug("readiness check failing", { check: name, err: (err as Error).message }),
});
logger.info("health endpoint listening", { port: config.healthPort });

const shutdown = createShutdown(logger, { stepTimeoutMs: config.totalTimeoutMs + 10_000 });
shutdown.register("mark not ready", () => {
  stopping = true;
});
// Stops fetching, lets the images in flight finish and be recorded, commits offsets, then stops retries and GC.
shutdown.register("stop media consumer", () => media.stop());
shutdown.register("stop health endpoint", () => health.stop());
shutdown.register("close postgres", () => sql.end({ timeout: 5 }));
shutdown.listen();

// Kafka may be down at boot: wait for it (not ready meanwhile) instead of exiting.
await retryUntilDone("create topics", () => ensureTopics(kafka, topicSpecs(config.kafka.topics), logger), { logger, isStopping: () => stopping });
if (await retryUntilDone("start consuming", () => media.start().then(() => true), { logger, isStopping: () => stopping })) {
  logger.info("consuming", { groupId: config.groupId, concurrency: config.concurrency, downloadConcurrency: config.downloadConcurrency, ...describeMediaStorage(config.storage) });
}
