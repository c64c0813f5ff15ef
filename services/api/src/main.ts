// Composition root: the only place that creates clients, wires dependencies and handles shutdown.
import { Partitioners } from "kafkajs";
import { topicSpecs } from "@pss/contracts";
import {
  ConfigError,
  createKafka,
  createLogger,
  createPostgres,
  createRedis,
  createMediaStorage,
  createShutdown,
  describeMediaStorage,
  ensureTopics,
  installCrashGuard,
  pingKafka,
  retryUntilDone,
  type ReadinessCheck,
} from "@pss/service-kit";
import { createApp } from "./app.ts";
import { serverOptions } from "./http/edge.ts";
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
installCrashGuard(logger);
// A short connect timeout: while PostgreSQL is unreachable, requests answer 503 within ~2 s instead of hanging.
const sql = createPostgres(config.postgres, { applicationName: "pss-api", genericPlans: true, connectTimeoutSeconds: 1.5 });
const redis = createRedis(config.redis);
redis.on("error", (err) => logger.warn("redis unavailable", { err: err.message }));
const kafka = createKafka(config.kafka, logger);
// At-least-once: one request in flight keeps per-partition order; consumers drop repeats by aggregate version.
const producer = kafka.producer({ maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner, retry: { retries: 5 } });
const relay = createOutboxRelay({ sql, producer, logger }, config.outboxRelay);

// Image variants: served from the directory or bucket the media service writes to.
const mediaStorage = createMediaStorage(config.mediaStorage);

// Only buyers' search needs OpenSearch: it is not a readiness check, so partner writes go on while it is down.
const opensearch = createOpenSearch(config.opensearch);
const leads = {
  addressLimiter: createRateLimiter({ redis, logger, limit: config.leadRateLimitPerAddress, windowSeconds: 3600, name: "lead-address" }),
  listingLimiter: createRateLimiter({ redis, logger, limit: config.leadRateLimitPerListing, windowSeconds: 3600, name: "lead-listing" }),
  trustProxy: config.trustProxy,
  countCache: createLeadCountCache({ redis, logger, ttlSeconds: config.leadCountCacheSeconds }),
};

// Ready when PostgreSQL answers. Redis and Kafka outages degrade the API (no shared caches or rate limits;
// events wait in the outbox) but it keeps serving, so they are reported without failing readiness.
const readiness: Record<string, ReadinessCheck> = {
  postgres: { run: () => sql`SELECT 1`, everyMs: 1000, timeoutMs: 1500 },
  redis: {
    run: async () => {
      if (redis.status !== "ready") throw new Error(`redis connection ${redis.status}`);
    },
    required: false,
    everyMs: 0,
  },
  // Only images need it: an outage answers 503 on /media and degrades readiness, everything else keeps working.
  storage: { run: () => mediaStorage.check(), required: false, everyMs: 10_000, timeoutMs: 3000 },
};
// A Kafka probe opens an admin connection: run it at most every 15 s, and only where this process relays.
if (config.outboxRelayEnabled) readiness.kafka = { run: () => pingKafka(kafka), required: false, everyMs: 15_000, timeoutMs: 2000 };

let stopping = false;
const app = createApp({
  sql,
  logger,
  authenticator: createAuthenticator({ sql, redis, logger }),
  partnerRateLimiter: createRateLimiter({ redis, logger, limit: config.rateLimitPerMinute, windowSeconds: 60, name: "partner" }),
  publicBaseUrl: config.publicBaseUrl,
  maxBodyBytes: config.maxBodyBytes,
  readiness,
  isStopping: () => stopping,
  media: { storage: mediaStorage, delivery: config.mediaDelivery, presignSeconds: config.mediaPresignSeconds },
  opensearch,
  searchAlias: config.searchAlias,
  leads,
}).listen({
  port: config.port,
  hostname: "0.0.0.0",
  ...serverOptions((err) => logger.error("unhandled error outside the application", { err: err instanceof Error ? err : String(err) })),
});
logger.info("listening", { port: config.port, publicBaseUrl: config.publicBaseUrl, mediaDelivery: config.mediaDelivery, ...describeMediaStorage(config.mediaStorage) });
// Topics are the relay's business: created in the background (retrying through a Kafka outage) before it
// starts, so the API boots and serves whether or not Kafka answers, and creates nothing when its relay is off.
const relayBoot = config.outboxRelayEnabled
  ? retryUntilDone("create topics", () => ensureTopics(kafka, topicSpecs(config.kafka.topics), logger), { logger, isStopping: () => stopping }).then(() => {
      if (!stopping) relay.start();
    })
  : Promise.resolve();

const shutdown = createShutdown(logger);
shutdown.register("stop accepting requests", async () => {
  stopping = true;
  await app.stop();
});
shutdown.register("stop outbox relay", async () => {
  await relayBoot;
  await relay.stop();
});
shutdown.register("close postgres", () => sql.end({ timeout: 5 }));
shutdown.register("close redis", () => redis.quit());
shutdown.listen();
