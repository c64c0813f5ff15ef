// Composition root: the only place that creates clients, wires dependencies and handles shutdown.
import { ALL_TOPICS } from "@pss/contracts";
import { ConfigError, startHealthServer, createKafka, createLogger, createPostgres, createShutdown, ensureTopics, pingKafka } from "@pss/service-kit";
import { loadConfig } from "./config.ts";

let config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(`indexer: ${err.message}`);
    process.exit(1);
  }
  throw err;
}

const logger = createLogger({ service: "indexer", level: config.logLevel });
const sql = createPostgres(config.postgres, { applicationName: "pss-indexer" });
const kafka = createKafka(config.kafka, logger);
await ensureTopics(kafka, ALL_TOPICS);

let stopping = false;
const health = startHealthServer({
  service: "indexer",
  port: config.healthPort,
  checks: { postgres: () => sql`SELECT 1`, kafka: () => pingKafka(kafka) },
  isStopping: () => stopping,
});
logger.info("health endpoint listening", { port: config.healthPort });

const shutdown = createShutdown(logger);
shutdown.register("mark not ready", () => {
  stopping = true;
});
shutdown.register("stop health endpoint", () => health.stop());
shutdown.register("close postgres", () => sql.end({ timeout: 5 }));
shutdown.listen();
