// Composition root: the only place that creates clients, wires dependencies and handles shutdown.
import { Partitioners } from "kafkajs";
import { ALL_TOPICS } from "@pss/contracts";
import { ConfigError, createKafka, createLogger, createPostgres, createRedis, createShutdown, ensureTopics, pingKafka } from "@pss/service-kit";
import { createApp } from "./app.ts";
import { createOpenSearch } from "@pss/service-kit";
import { createAuthenticator } from "./auth/authenticator.ts";
import { loadConfig, type ApiConfig } from "./config.ts";
import { createRateLimiter } from "./http/rate-limiter.ts";
import { createLeadCountCache } from "./lead-counts/lead-count-cache.ts";
import { createOutboxRelay } from "./outbox/outbox-relay.ts";

let config: ApiConfig;
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
const sql = createPostgres(config.postgres, { applicationName: "pss-api", genericPlans: true });
const redis = createRedis(config.redis);
redis.on("error", (err) => logger.warn("redis unavailable", { err: err.message }));
const kafka = createKafka(config.kafka, logger);
await ensureTopics(kafka, ALL_TOPICS);
// At-least-once: one request in flight keeps per-partition order; consumers drop repeats by aggregate version.
const producer = kafka.producer({ maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner, retry: { retries: 5 } });
const relay = createOutboxRelay({ sql, producer, logger }, config.outboxRelay);

// Only buyers' search needs OpenSearch: it is not a readiness check, so partner writes go on while it is down.
const opensearch = createOpenSearch(config.opensearch);
const leads = {
  addressLimiter: createRateLimiter({ redis, logger, limit: config.leadRateLimitPerAddress, windowSeconds: 3600, name: "lead-address" }),
  listingLimiter: createRateLimiter({ redis, logger, limit: config.leadRateLimitPerListing, windowSeconds: 3600, name: "lead-listing" }),
  trustProxy: config.trustProxy,
  countCache: createLeadCountCache({ redis, logger, ttlSeconds: config.leadCountCacheSeconds }),
};

let stopping = false;
const app = createApp({
  sql,
  logger,
  authenticator: createAuthenticator({ sql, redis, logger }),
  partnerRateLimiter: createRateLimiter({ redis, logger, limit: config.rateLimitPerMinute, windowSeconds: 60, name: "partner" }),
  publicBaseUrl: config.publicBaseUrl,
  maxBodyBytes: config.maxBodyBytes,
  readiness: {
    postgres: () => sql`SELECT 1`,
    redis: () => redis.ping(),
    kafka: () => pingKafka(kafka),
  },
  isStopping: () => stopping,
  mediaDir: config.mediaDir,
  opensearch,
  searchAlias: config.searchAlias,
  leads,
}).listen({ port: config.port, hostname: "0.0.0.0", maxRequestBodySize: config.maxBodyBytes * 2 });
logger.info("listening", { port: config.port, publicBaseUrl: config.publicBaseUrl });
if (config.outboxRelayEnabled) relay.start();

const shutdown = createShutdown(logger);
shutdown.register("stop accepting requests", async () => {
  stopping = true;
  await app.stop();
});
shutdown.register("stop outbox relay", () => relay.stop());
shutdown.register("close postgres", () => sql.end({ timeout: 5 }));
shutdown.register("close redis", () => redis.quit());
shutdown.listen();
