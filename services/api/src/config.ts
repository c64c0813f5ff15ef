// The only place the API reads its environment. Fails at boot with every problem listed.
import { availableParallelism } from "node:os";
import {
  developmentProfileNotice,
  ConfigError,
  createEnvReader,
  isProduction,
  readKafkaConfig,
  readLimit,
  readLogLevel,
  readMediaStorageConfig,
  readPostgresConfig,
  readPublicBaseUrl,
  readRedisConfig,
  readSecretKey,
  type EnvReader,
  type KafkaConfig,
  type LogLevel,
  type MediaStorageConfig,
  type PostgresConfig,
  type RedisConfig,
  readTracingConfig,
  type TracingConfig,
} from "@pss/service-kit";
import { readOpenSearchConfig, type OpenSearchConfig } from "@pss/service-kit";
import { FEED_RETENTION_DAYS, DEFAULT_SEARCH_ALIAS } from "@pss/contracts";
import { DEFAULT_MAX_BATCH_BYTES, DEFAULT_MAX_MESSAGE_BYTES } from "./outbox/outbox-batching.ts";
import { DEFAULT_RELAY_LEASE_MS } from "./outbox/outbox-relay.ts";
import { DEFAULT_RESEND_DAILY_BUDGET } from "./webhooks/webhook-resend.ts";
import { DEFAULT_IDEMPOTENCY_RETENTION_HOURS } from "./http/idempotency.ts";
import { readTrustedProxiesSetting, type TrustedProxies } from "./leads/client-address.ts";
import { DEFAULT_WRITE_GROUP_CONCURRENCY } from "./listings/listing-write-groups.ts";

export interface ApiConfig {
  port: number;
  /** /healthz, /readyz and /metrics: a port of their own, apart from public traffic (API_HEALTH_PORT). */
  healthPort: number;
  publicBaseUrl: string;
  logLevel: LogLevel;
  /** Spans and where they go (TRACING_ZIPKIN_URL, TRACING_SAMPLE_RATIO, TRACING_SERVICE_NAME). */
  tracing: TracingConfig;
  /** The boot line outside NODE_ENV=production (null in production). */
  developmentProfile: string | null;
  /** Protections switched off on purpose with NODE_ENV=production (`<VARIABLE>_I_UNDERSTAND=true`): a warning each at boot. */
  productionOverrides: readonly string[];
  postgres: PostgresConfig;
  redis: RedisConfig;
  kafka: KafkaConfig;
  /**
   * Requests (batch items) per minute per API key; 0 turns rate limiting off (the development default: the spec
   * publishes no limit). With NODE_ENV=production the default is PRODUCTION_RATE_LIMIT_PER_MINUTE, and 0 needs
   * RATE_LIMIT_PER_MINUTE_I_UNDERSTAND=true.
   */
  rateLimitPerMinute: number;
  /** Largest accepted request body in bytes. */
  maxBodyBytes: number;
  /** Where the media service stores variants; GET /media/<name> serves them from there. */
  mediaStorage: MediaStorageConfig;
  /** `api`: the API streams variants itself; `redirect`: 302 to a presigned object-storage URL (s3 only). */
  mediaDelivery: MediaDelivery;
  /** Lifetime of a presigned URL in redirect mode. */
  mediaPresignSeconds: number;
  outboxRelayEnabled: boolean;
  /**
   * Group writes of single listing PUTs in flight at once per process (WRITE_GROUP_CONCURRENCY): PUTs that arrive
   * while that many are being written are written together, one commit for the group (listing-write-groups.ts).
   * 0: every PUT written alone.
   */
  writeGroupConcurrency: number;
  /** API processes sharing the public port (API_WORKERS); above 1 this process is their primary. */
  workers: number;
  /** Set by the primary in the processes it starts (API_WORKER_INDEX); null in a primary or a single process. */
  workerIndex: number | null;
  outboxRelay: OutboxRelayLimits;
  opensearch: OpenSearchConfig;
  /** Alias buyers' search reads (the indexer writes it). */
  searchAlias: string;
  /**
   * Proxies whose X-Forwarded-For is believed (TRUST_PROXY_CIDRS): the client address is the right-most entry that
   * is not one of theirs (docs/operations.md, "Trusted proxies"). None by default.
   */
  trustedProxies: TrustedProxies;
  /**
   * Leads per hour per client address (IPv6: per /64) and per listing from one address, and per minute from everyone
   * (the site-wide abuse limit); 0 turns a limit off (docs/leads.md, "Abuse limits").
   */
  leadRateLimitPerAddress: number;
  leadRateLimitPerListingAddress: number;
  leadRateLimitGlobalPerMinute: number;
  /** Seconds a lead count answer is cached in Redis; 0 turns the cache off. */
  leadCountCacheSeconds: number;
  /** How often buyer statistics (views, impressions) are flushed to PostgreSQL; 0 turns counting off. */
  buyerStatsFlushMs: number;
  /** Visitors counted per client address (IPv6: per /64) per listing per day, at most (docs/partner-api.md). */
  buyerStatsVisitorsPerAddress: number;
  /** Visitors counted per IPv6 /48 per listing per day, at most, however many /64s they come from. */
  buyerStatsVisitorsPerSite: number;
  /** Hours the answer to a POST sent with an Idempotency-Key is kept (docs/partner-api.md, "Idempotency-Key"). */
  idempotencyRetentionHours: number;
  /** Encrypts webhook signing secrets; the webhooks service needs the same key to sign. */
  webhookSecretKey: Buffer;
  /** Webhook deliveries a partner may re-send (retry, recover, replay, test) per audience in 24 hours (docs/webhooks.md "Re-sending"). */
  webhookResendDailyBudget: number;
  /** Test mode and change history (docs/sandbox.md). */
  sandbox: SandboxConfig;
  /** Days the change feed keeps its events (GET /partner/v1/events); at least FEED_RETENTION_DAYS. */
  feedRetentionDays: number;
  /** Records every request a key authenticated for the partner portal (API_REQUEST_LOG; docs/portal.md). */
  requestLog: boolean;
}

export interface SandboxConfig {
  /** HMAC key of preview links; absent: a key kept in PostgreSQL, shared by every instance. */
  previewLinkSecret?: string;
  /** How long a preview link of a test record works. */
  previewLinkTtlSeconds: number;
  /** Test records not written for this many days are deleted. */
  testDataRetentionDays: number;
  /** Change history entries older than this many days are deleted. */
  historyRetentionDays: number;
  /** How often the retention job runs (one instance at a time); 0 turns it off. */
  retentionIntervalSeconds: number;
}

export const MIN_PREVIEW_SECRET_LENGTH = 32;

/**
 * The per-key limit production applies when RATE_LIMIT_PER_MINUTE is unset: a flood guard, not a published quota.
 * About 1,000 requests (or batch items) a second, above what one partner's sync reaches on one API instance
 * (docs/benchmarks.md), so only a runaway client meets it, and it can never take every instance for itself.
 */
export const PRODUCTION_RATE_LIMIT_PER_MINUTE = 60_000;

function readSandboxConfig(r: EnvReader): SandboxConfig {
  return {
    previewLinkSecret: r.optionalString("PREVIEW_LINK_SECRET"),
    previewLinkTtlSeconds: r.int("PREVIEW_LINK_TTL_SECONDS", 3600, { min: 60, max: 7 * 24 * 3600 }),
    testDataRetentionDays: r.int("TEST_DATA_RETENTION_DAYS", 30, { min: 1, max: 3650 }),
    historyRetentionDays: r.int("HISTORY_RETENTION_DAYS", 180, { min: 1, max: 36500 }),
    retentionIntervalSeconds: r.int("RETENTION_INTERVAL_SECONDS", 3600, { min: 0, max: 7 * 24 * 3600 }),
  };
}

/**
 * Settings of earlier releases whose meaning is gone: set, they stop the boot saying what replaced them, so a
 * deployment never silently runs without what it asked for.
 */
const REPLACED_SETTINGS: Record<string, string> = {
  TRUST_PROXY:
    'TRUST_PROXY is replaced by TRUST_PROXY_CIDRS: list the address ranges of your proxies (e.g. the balancer\'s network), or remove TRUST_PROXY (docs/operations.md, "Trusted proxies")',
  LEAD_RATE_LIMIT_PER_LISTING:
    'LEAD_RATE_LIMIT_PER_LISTING is replaced by LEAD_RATE_LIMIT_PER_LISTING_ADDRESS and LEAD_RATE_LIMIT_GLOBAL_PER_MINUTE: a per-listing count let a listing\'s owner learn how many inquiries others sent (docs/leads.md, "Abuse limits")',
};

/** TRUST_PROXY_CIDRS: the proxies whose X-Forwarded-For is believed (none by default). */
function readTrustedProxies(r: EnvReader): TrustedProxies {
  for (const [name, message] of Object.entries(REPLACED_SETTINGS))
    if (r.optionalString(name) !== undefined) r.problem(message);
  return readTrustedProxiesSetting(r, "the inquiry limits and the views cap");
}

export const MEDIA_DELIVERIES = ["api", "redirect"] as const;
export type MediaDelivery = (typeof MEDIA_DELIVERIES)[number];

export function loadConfig(env: Record<string, string | undefined> = process.env): ApiConfig {
  const r = createEnvReader(env);
  const port = r.int("API_PORT", 8080, { min: 0, max: 65535 });
  const config: ApiConfig = {
    port,
    healthPort: r.int("API_HEALTH_PORT", 8085, { min: 0, max: 65535 }),
    publicBaseUrl: readPublicBaseUrl(r, `http://127.0.0.1:${port}`),
    logLevel: readLogLevel(r),
    tracing: readTracingConfig(r, "pss-api"),
    developmentProfile: developmentProfileNotice(r),
    productionOverrides: r.accepted(),
    postgres: readPostgresConfig(r, 20),
    redis: readRedisConfig(r),
    kafka: readKafkaConfig(r, "pss-api"),
    rateLimitPerMinute: readLimit(
      r,
      "RATE_LIMIT_PER_MINUTE",
      isProduction(r) ? PRODUCTION_RATE_LIMIT_PER_MINUTE : 0,
      "turns the per-key rate limit off: one API key can take the whole API's capacity",
    ),
    maxBodyBytes: r.int("MAX_BODY_BYTES", 1_048_576, { min: 1024 }),
    mediaStorage: readMediaStorageConfig(r),
    mediaDelivery: r.oneOf("MEDIA_DELIVERY", MEDIA_DELIVERIES, "api"),
    mediaPresignSeconds: r.int("MEDIA_PRESIGN_SECONDS", 3600, { min: 60, max: 7 * 24 * 3600 }),
    outboxRelayEnabled: r.bool("OUTBOX_RELAY_ENABLED", true),
    writeGroupConcurrency: r.int("WRITE_GROUP_CONCURRENCY", DEFAULT_WRITE_GROUP_CONCURRENCY, { min: 0, max: 64 }),
    // One event loop per process: by default one process per core (docs/benchmarks.md, "Both cores").
    workers: r.int("API_WORKERS", availableParallelism(), { min: 1, max: 64 }),
    workerIndex:
      r.optionalString("API_WORKER_INDEX") === undefined ? null : r.int("API_WORKER_INDEX", 0, { min: 0, max: 63 }),
    outboxRelay: readOutboxRelayLimits(r),
    opensearch: readOpenSearchConfig(r),
    searchAlias: r.string("OPENSEARCH_INDEX_ALIAS", DEFAULT_SEARCH_ALIAS),
    trustedProxies: readTrustedProxies(r),
    leadRateLimitPerAddress: readLimit(
      r,
      "LEAD_RATE_LIMIT_PER_ADDRESS",
      20,
      "turns the lead abuse limit per client address off: one client can send brokers any number of inquiries",
    ),
    leadRateLimitPerListingAddress: readLimit(
      r,
      "LEAD_RATE_LIMIT_PER_LISTING_ADDRESS",
      5,
      "turns the lead abuse limit per listing and client address off: one client can send one broker any number of inquiries",
    ),
    leadRateLimitGlobalPerMinute: readLimit(
      r,
      "LEAD_RATE_LIMIT_GLOBAL_PER_MINUTE",
      300,
      "turns the site-wide lead abuse limit off: many addresses together can flood brokers",
    ),
    leadCountCacheSeconds: r.int("LEAD_COUNT_CACHE_SECONDS", 3, { min: 0, max: 300 }),
    buyerStatsFlushMs: r.int("BUYER_STATS_FLUSH_MS", 2000, { min: 0, max: 600_000 }),
    buyerStatsVisitorsPerAddress: r.int("BUYER_STATS_VISITORS_PER_ADDRESS", 3, { min: 1, max: 100 }),
    buyerStatsVisitorsPerSite: r.int("BUYER_STATS_VISITORS_PER_SITE", 12, { min: 1, max: 1000 }),
    idempotencyRetentionHours: r.int("IDEMPOTENCY_KEY_RETENTION_HOURS", DEFAULT_IDEMPOTENCY_RETENTION_HOURS, {
      min: 1,
      max: 30 * 24,
    }),
    webhookSecretKey: readSecretKey(r, "WEBHOOK_SECRET_KEY"),
    webhookResendDailyBudget: r.int("WEBHOOK_RESEND_DAILY_BUDGET", DEFAULT_RESEND_DAILY_BUDGET, {
      min: 1,
      max: 10_000_000,
    }),
    sandbox: readSandboxConfig(r),
    feedRetentionDays: r.int("FEED_RETENTION_DAYS", FEED_RETENTION_DAYS, { min: FEED_RETENTION_DAYS, max: 36500 }),
    requestLog: r.bool("API_REQUEST_LOG", true),
  };
  if (config.mediaDelivery === "redirect" && config.mediaStorage.kind !== "s3") {
    r.problem("MEDIA_DELIVERY=redirect needs MEDIA_STORAGE=s3: a local directory has no URL to redirect to");
  }
  r.done();
  const secret = config.sandbox.previewLinkSecret;
  if (secret !== undefined && secret.length < MIN_PREVIEW_SECRET_LENGTH) {
    throw new ConfigError([
      `PREVIEW_LINK_SECRET must be at least ${MIN_PREVIEW_SECRET_LENGTH} characters (a random value, the same on every API instance)`,
    ]);
  }
  return config;
}

export interface RelayConfig {
  healthPort: number;
  logLevel: LogLevel;
  tracing: TracingConfig;
  /** The boot line outside NODE_ENV=production (null in production). */
  developmentProfile: string | null;
  /** Protections switched off on purpose with NODE_ENV=production (`<VARIABLE>_I_UNDERSTAND=true`): a warning each at boot. */
  productionOverrides: readonly string[];
  postgres: PostgresConfig;
  kafka: KafkaConfig;
  outboxRelay: OutboxRelayLimits;
  /** Days the change feed keeps its events (the sequencer beside the relay prunes them). */
  feedRetentionDays: number;
}

/**
 * Bytes the outbox relay puts in one Kafka request, the largest row it sends at all (larger: set aside), the
 * length of its lease (a relay that died is replaced by a standby after at most that), and how long sent rows stay.
 */
export interface OutboxRelayLimits {
  maxBatchBytes: number;
  maxMessageBytes: number;
  leaseMs: number;
  /** OUTBOX_RETENTION_SECONDS: sent rows kept for inspection (0: deleted once sent). */
  retentionMs: number;
}

function readOutboxRelayLimits(r: EnvReader): OutboxRelayLimits {
  // Defaults stay well under Kafka's 1,048,588 bytes per partition batch (message.max.bytes).
  const maxMessageBytes = r.int("OUTBOX_MAX_MESSAGE_BYTES", DEFAULT_MAX_MESSAGE_BYTES, {
    min: 1024,
    max: 100 * 1024 * 1024,
  });
  const maxBatchBytes = r.int("OUTBOX_MAX_BATCH_BYTES", DEFAULT_MAX_BATCH_BYTES, { min: 1024, max: 100 * 1024 * 1024 });
  const leaseMs = r.int("OUTBOX_RELAY_LEASE_SECONDS", DEFAULT_RELAY_LEASE_MS / 1000, { min: 3, max: 600 }) * 1000;
  const retentionMs = r.int("OUTBOX_RETENTION_SECONDS", 0, { min: 0, max: 30 * 86_400 }) * 1000;
  return { maxBatchBytes, maxMessageBytes, leaseMs, retentionMs };
}

/** Configuration of the relay-only process (relay-main.ts). */
export function loadRelayConfig(env: Record<string, string | undefined> = process.env): RelayConfig {
  const r = createEnvReader(env);
  const config: RelayConfig = {
    healthPort: r.int("HEALTH_PORT", 8084, { min: 0, max: 65535 }),
    logLevel: readLogLevel(r),
    tracing: readTracingConfig(r, "pss-outbox-relay"),
    developmentProfile: developmentProfileNotice(r),
    productionOverrides: r.accepted(),
    postgres: readPostgresConfig(r, 2),
    kafka: readKafkaConfig(r, "pss-outbox-relay"),
    outboxRelay: readOutboxRelayLimits(r),
    feedRetentionDays: r.int("FEED_RETENTION_DAYS", FEED_RETENTION_DAYS, { min: FEED_RETENTION_DAYS, max: 36500 }),
  };
  r.done();
  return config;
}
