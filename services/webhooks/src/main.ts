// Composition root: the only place that creates clients, wires dependencies and handles shutdown.
import { ALL_TOPICS } from "@pss/contracts";
import {
  ConfigError,
  createKafka,
  createLogger,
  createPostgres,
  createShutdown,
  ensureTopics,
  installCrashGuard,
  pingKafka,
  retryUntilDone,
  startHealthServer,
} from "@pss/service-kit";
import { loadConfig, type WebhooksConfig } from "./config.ts";
import { createWebhooksService } from "./webhooks-service.ts";

let config: WebhooksConfig;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(`webhooks: ${err.message}`);
    process.exit(1);
  }
  throw err;
}

const logger = createLogger({ service: "webhooks", level: config.logLevel });
installCrashGuard(logger);
const sql = createPostgres(config.postgres, { applicationName: "pss-webhooks" });
const kafka = createKafka(config.kafka, logger);
const webhooks = createWebhooksService({ config, sql, kafka, logger });

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
  onCheckFailure: (name, err) => logger.debug("readiness check failing", { check: name, err: (err as Error).message }),
});
logger.info("health endpoint listening", { port: health.port });

// The consumer step waits for the deliveries in flight, each bounded by WEBHOOK_TIMEOUT_MS.
const shutdown = createShutdown(logger, { stepTimeoutMs: config.timeoutMs + 10_000 });
shutdown.register("mark not ready", () => {
  stopping = true;
});
shutdown.register("stop consuming and delivering", () => webhooks.stop());
shutdown.register("stop health endpoint", () => health.stop());
shutdown.register("close postgres", () => sql.end({ timeout: 5 }));
shutdown.listen();

// Kafka may be down at boot: wait for it (not ready meanwhile) instead of exiting.
await retryUntilDone("create topics", () => ensureTopics(kafka, ALL_TOPICS), { logger, isStopping: () => stopping });
if (await retryUntilDone("start consuming", () => webhooks.start().then(() => true), { logger, isStopping: () => stopping })) {
  logger.info("delivering webhooks", { groupId: config.groupId, concurrency: config.concurrency, timeoutMs: config.timeoutMs });
}
