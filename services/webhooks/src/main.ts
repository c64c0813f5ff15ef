// Composition root: the only place that creates clients, wires dependencies and handles shutdown.
import { topicSpecs } from "@pss/contracts";
import {
  createConsumerMetrics,
  createKafka,
  createLogger,
  createMetrics,
  createOutageMetrics,
  createPostgres,
  createShutdown,
  ensureTopics,
  installCrashGuard,
  loadConfigOrExit,
  pingKafka,
  retryUntilDone,
  startHealthServer,
} from "@pss/service-kit";
import { loadConfig } from "./config.ts";
import { createWebhooksMetrics } from "./webhooks-metrics.ts";
import { createWebhooksService } from "./webhooks-service.ts";

const config = loadConfigOrExit("webhooks", loadConfig);

const logger = createLogger({ service: "webhooks", level: config.logLevel });
installCrashGuard(logger);
const sql = createPostgres(config.postgres, { applicationName: "pss-webhooks" });
const kafka = createKafka(config.kafka, logger);
const metrics = createMetrics({ service: "webhooks" });
const webhooks = createWebhooksService({
  config,
  sql,
  kafka,
  logger,
  session: config.kafka.consumer,
  outageMetrics: createOutageMetrics(metrics, "webhooks"),
  metrics: {
    webhooks: createWebhooksMetrics({ metrics, sql, logger }),
    consumer: createConsumerMetrics(metrics, { onError: (err) => logger.debug("consumer metrics unavailable", { err: (err as Error).message }) }),
  },
});

let stopping = false;
const health = startHealthServer({
  service: "webhooks",
  port: config.healthPort,
  checks: {
    postgres: () => sql`SELECT 1`,
    // An admin connection per probe is not free: at most one every 10 s.
    kafka: { run: () => pingKafka(kafka), everyMs: 10_000, timeoutMs: 2000 },
    consumer: async () => {
      if (!webhooks.isRunning()) throw new Error("not consuming");
    },
  },
  isStopping: () => stopping,
  metrics,
  onCheckFailure: (name, err) => logger.debug("readiness check failing", { check: name, err: (err as Error).message }),
});
logger.info("health endpoint listening", { port: health.port });

// The consumer step waits for the deliveries in flight, each bounded by WEBHOOK_TIMEOUT_MS. An attempt cut short
// by SIGKILL is not lost: its claim expires and it is sent again with the same webhook-id.
const shutdown = createShutdown(logger, { stepTimeoutMs: config.timeoutMs + 10_000 });
shutdown.register("mark not ready", () => {
  stopping = true;
});
shutdown.register("stop consuming and delivering", () => webhooks.stop());
shutdown.register("stop health endpoint", () => health.stop());
shutdown.register("close postgres", () => sql.end({ timeout: 5 }));
shutdown.listen();

// Kafka may be down at boot: wait for it (not ready meanwhile) instead of exiting.
await retryUntilDone("create topics", () => ensureTopics(kafka, topicSpecs(config.kafka.topics), logger), { logger, isStopping: () => stopping });
if (await retryUntilDone("start consuming", () => webhooks.start().then(() => true), { logger, isStopping: () => stopping })) {
  logger.info("delivering webhooks", { groupId: config.groupId, concurrency: config.concurrency, timeoutMs: config.timeoutMs });
}
