// Composition root: the only place that creates clients and wires dependencies; runService (service-kit) boots,
// checks and stops them. One process per container: the marketplace scales with replicas behind the balancer.
import {
  createHttpMetrics,
  createMediaStorage,
  createOpenSearch,
  createPostgres,
  createRedis,
  describeMediaStorage,
  redisReadiness,
  createPeriodicJob,
  runService,
  serveTraced,
  type ReadinessCheck,
  type ServiceKit,
} from "@pss/service-kit";
import { createAuthenticator, createPreviewLinks, createRateLimiter, serverOptions } from "@pss/http-kit";
import { createGazetteer } from "@pss/geo";
import { createMarketplace } from "./app.ts";
import { createBuyerService } from "./buyers/buyer-service.ts";
import { createSavedSearches } from "./saved-searches/saved-searches.ts";
import { loadConfig, type MarketplaceConfig } from "./config.ts";
import { createStatsRecorder } from "./stats/stats-recorder.ts";

await runService({ name: "marketplace", loadConfig, build: buildMarketplace });

function buildMarketplace({ config, logger, metrics, tracing }: ServiceKit<MarketplaceConfig>) {
  // A short connect timeout: while PostgreSQL is unreachable, requests answer 503 within ~2 s instead of hanging.
  const sql = createPostgres(config.postgres, {
    applicationName: "pss-marketplace",
    genericPlans: true,
    connectTimeoutSeconds: 1.5,
  });
  const redis = createRedis(config.redis);
  redis.on("error", (err) => logger.warn("redis unavailable", { err: err.message }));
  // Image variants: served from the directory or bucket the media service writes to.
  const mediaStorage = createMediaStorage(config.mediaStorage);
  // Search needs OpenSearch, the pages and inquiries do not: not a readiness check, so they go on while it is down.
  const opensearch = createOpenSearch(config.opensearch);
  const limiter = (limit: number, windowSeconds: number, name: string) =>
    createRateLimiter({ redis, logger, limit, windowSeconds, name });
  const leads = {
    addressLimiter: limiter(config.leadRateLimitPerAddress, 3600, "lead-address"),
    listingAddressLimiter: limiter(config.leadRateLimitPerListingAddress, 3600, "lead-listing-address"),
    globalLimiter: limiter(config.leadRateLimitGlobalPerMinute, 60, "lead-global"),
    trustedProxies: config.trustedProxies,
  };

  const buyers = createBuyerService({
    sql,
    opensearch,
    searchAlias: config.searchAlias,
    publicBaseUrl: config.publicBaseUrl,
    // Where "near" is: the datasets are read once per process, on the first search that names a place.
    gazetteer: createGazetteer(),
  });
  const saved = config.savedSearches;
  const savedSearches = createSavedSearches({
    sql,
    logger,
    buyers,
    publicBaseUrl: config.publicBaseUrl,
    settings: saved,
    addressLimiter: limiter(saved.savesPerAddressPerHour, 3600, "saved-search-address"),
    recipientLimiter: limiter(saved.mailsPerRecipientPerDay, 86_400, "saved-search-recipient"),
  });
  // Digests due, every instance looking (each due search is taken by one: SKIP LOCKED); a full batch runs again at once.
  const digests = createPeriodicJob({
    name: "saved-search digests",
    logger,
    intervalMs: saved.jobIntervalMs,
    firstDelayMs: Math.min(saved.jobIntervalMs, 5000),
    tick: async () => (await savedSearches.runDigests(20)).due >= 20,
  });

  // Buyer statistics: pages append to memory; the flusher writes through Redis (dedupe) to PostgreSQL.
  const stats =
    config.buyerStatsFlushMs > 0
      ? createStatsRecorder({
          sql,
          redis,
          logger,
          trustedProxies: config.trustedProxies,
          flushIntervalMs: config.buyerStatsFlushMs,
          visitorsPerAddress: config.buyerStatsVisitorsPerAddress,
          visitorsPerSite: config.buyerStatsVisitorsPerSite,
        })
      : undefined;
  stats?.start();

  // Ready when PostgreSQL answers. A Redis outage lifts the abuse limits' shared counts and delays view counting,
  // an object-storage outage answers 503 on /media only: both are reported without failing readiness.
  const readiness: Record<string, ReadinessCheck | null> = {
    postgres: { run: () => sql`SELECT 1`, everyMs: 1000, timeoutMs: 1500 },
    redis: { run: redisReadiness(redis), required: false, everyMs: 0 },
    storage: { run: () => mediaStorage.check(), required: false, everyMs: 10_000, timeoutMs: 3000 },
  };

  const app = createMarketplace({
    sql,
    logger,
    publicBaseUrl: config.publicBaseUrl,
    maxBodyBytes: config.maxBodyBytes,
    httpMetrics: createHttpMetrics(metrics),
    media: { storage: mediaStorage, delivery: config.mediaDelivery, presignSeconds: config.mediaPresignSeconds },
    opensearch,
    searchAlias: config.searchAlias,
    leads,
    // Previews open with the owning partner's test key too; the marketplace never stamps a key's last use.
    authenticator: createAuthenticator({ sql, redis, logger, recordLastUse: false }),
    previews: createPreviewLinks({
      sql,
      publicBaseUrl: config.publicBaseUrl,
      secret: config.previewLinkSecret,
      ttlSeconds: 3600,
    }),
    stats,
    idempotencyRetentionHours: config.idempotencyRetentionHours,
    tracing,
    buyers,
    savedSearches,
  });
  // Every request in its server span (service-kit tracing-http.ts), as the API's.
  serveTraced(app, tracing, {
    port: config.port,
    hostname: "0.0.0.0",
    ...serverOptions((err) =>
      logger.error("unhandled error outside the application", { err: err instanceof Error ? err : String(err) }),
    ),
  });
  logger.info("listening", {
    port: config.port,
    healthPort: config.healthPort,
    publicBaseUrl: config.publicBaseUrl,
    mediaDelivery: config.mediaDelivery,
    ...describeMediaStorage(config.mediaStorage),
  });

  digests.start();
  return {
    clients: { sql, redis },
    checks: readiness,
    stopIntake: () => app.stop(),
    stop: {
      "stop saved-search digests": () => digests.stop(),
      "flush buyer statistics": async () => stats?.stop(),
    },
  };
}
