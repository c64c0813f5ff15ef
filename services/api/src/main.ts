// Composition root: the only place that creates clients, wires dependencies and handles shutdown.
import { ALL_TOPICS } from "@pss/contracts";
import { ConfigError, createKafka, createLogger, createPostgres, createRedis, createShutdown, ensureTopics, pingKafka } from "@pss/service-kit";
import { createApp } from "./app.ts";
import { loadConfig } from "./config.ts";

let config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(`api: ${err.message}`);
    process.exit(1);
  }
  throw err;
}

const logger = createLogger({ service: "api", level: config.logLevel });
const sql = createPostgres(config.postgres, { applicationName: "pss-api" });
const redis = createRedis(config.redis);
redis.on("error", (err) => logger.warn("redis unavailable", { err: err.message }));
const kafka = createKafka(config.kafka, logger);
await ensureTopics(kafka, ALL_TOPICS);

let stopping = false;
const app = createApp({
  readiness: {
    postgres: () => sql`SELECT 1`,
    redis: () => redis.ping(),
    kafka: () => pingKafka(kafka),
  },
  isStopping: () => stopping,
}).listen({ port: config.port, hostname: "0.0.0.0" });
logger.info("listening", { port: config.port });

const shutdown = createShutdown(logger);
shutdown.register("stop accepting requests", async () => {
  stopping = true;
  await app.stop();
});
shutdown.register("close postgres", () => sql.end({ timeout: 5 }));
shutdown.register("close redis", () => redis.quit());
shutdown.listen();
