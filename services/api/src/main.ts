// Composition root: the only place that creates clients, wires dependencies and handles shutdown.
import { Partitioners } from "kafkajs";
import { ALL_TOPICS } from "@pss/contracts";
import {
  ConfigError,
  createKafka,
  createLogger,
  createPostgres,
  createRedis,
  createShutdown,
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
import { createPreviewLinks } from "./previews/preview-links.ts";
import { createRetentionJob } from "./test-mode/retention-job.ts";

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
};
// A Kafka probe opens an admin connection: run it at most every 15 s, and only where this process relays.
if (config.outboxRelayEnabled) readiness.kafka = { run: () => pingKafka(kafka), required: false, everyMs: 15_000, timeoutMs: 2000 };

// Deletes old test records and old change history; every instance runs it, one at a time works (advisory lock).
const retention = createRetentionJob({
  sql,
  logger,
  testDataRetentionDays: config.sandbox.testDataRetentionDays,
  historyRetentionDays: config.sandbox.historyRetentionDays,
  intervalMs: config.sandbox.retentionIntervalSeconds * 1000,
});

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
  mediaDir: config.mediaDir,
  opensearch,
  searchAlias: config.searchAlias,
  leads,
  previews: createPreviewLinks({ sql, publicBaseUrl: config.publicBaseUrl, secret: config.sandbox.previewLinkSecret, ttlSeconds: config.sandbox.previewLinkTtlSeconds }),
}).listen({
  port: config.port,
  hostname: "0.0.0.0",
  ...serverOptions((err) => logger.error("unhandled error outside the application", { err: err instanceof Error ? err : String(err) })),
});
logger.info("listening", { port: config.port, publicBaseUrl: config.publicBaseUrl });
// Topics are the relay's business: created in the background (retrying through a Kafka outage) before it
// starts, so the API boots and serves whether or not Kafka answers, and creates nothing when its relay is off.
const relayBoot = config.outboxRelayEnabled
  ? retryUntilDone("create topics", () => ensureTopics(kafka, ALL_TOPICS), { logger, isStopping: () => stopping }).then(() => {
      if (!stopping) relay.start();
    })
  : Promise.resolve();

retention.start();

const shutdown = createShutdown(logger);
shutdown.register("stop accepting requests", async () => {
  stopping = true;
  await app.stop();
});
shutdown.register("stop retention job", () => retention.stop());
shutdown.register("stop outbox relay", async () => {
  await relayBoot;
  await relay.stop();
});
shutdown.register("close postgres", () => sql.end({ timeout: 5 }));
shutdown.register("close redis", () => redis.quit());
shutdown.listen();
