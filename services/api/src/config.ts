// The only place the API reads its environment. Fails at boot with every problem listed.
import { availableParallelism } from "node:os";
import {
  developmentProfileNotice,
  createEnvReader,
  isProduction,
  readKafkaConfig,
  readLimit,
  readLogLevel,
  readPostgresConfig,
  readPublicBaseUrl,
  readRedisConfig,
  readSecretKey,
  type EnvReader,
  type KafkaConfig,
  type LogLevel,
  type PostgresConfig,
  type RedisConfig,
  readTracingConfig,
  type TracingConfig,
} from "@pss/service-kit";
import { FEED_RETENTION_DAYS } from "@pss/contracts";
import { DEFAULT_MAX_BATCH_BYTES, DEFAULT_MAX_MESSAGE_BYTES } from "./outbox/outbox-batching.ts";
import { DEFAULT_RELAY_LEASE_MS } from "./outbox/outbox-relay.ts";
import { DEFAULT_RESEND_DAILY_BUDGET } from "./webhooks/webhook-resend.ts";
import { DEFAULT_IDEMPOTENCY_RETENTION_HOURS, readPreviewLinkSecret } from "@pss/http-kit";
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
  /** Seconds a lead count answer is cached in Redis; 0 turns the cache off. */
  leadCountCacheSeconds: number;
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
  /** HMAC key of preview links; absent: a key kept in PostgreSQL, shared by every instance (and the marketplace). */
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

/**
 * The per-key limit production applies when RATE_LIMIT_PER_MINUTE is unset: a flood guard, not a published quota.
 * About 1,000 requests (or batch items) a second, above what one partner's sync reaches on one API instance
 * (docs/benchmarks.md), so only a runaway client meets it, and it can never take every instance for itself.
 */
export const PRODUCTION_RATE_LIMIT_PER_MINUTE = 60_000;

function readSandboxConfig(r: EnvReader): SandboxConfig {
  return {
    previewLinkSecret: readPreviewLinkSecret(r),
    previewLinkTtlSeconds: r.int("PREVIEW_LINK_TTL_SECONDS", 3600, { min: 60, max: 7 * 24 * 3600 }),
    testDataRetentionDays: r.int("TEST_DATA_RETENTION_DAYS", 30, { min: 1, max: 3650 }),
    historyRetentionDays: r.int("HISTORY_RETENTION_DAYS", 180, { min: 1, max: 36500 }),
    retentionIntervalSeconds: r.int("RETENTION_INTERVAL_SECONDS", 3600, { min: 0, max: 7 * 24 * 3600 }),
  };
}

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
    outboxRelayEnabled: r.bool("OUTBOX_RELAY_ENABLED", true),
    writeGroupConcurrency: r.int("WRITE_GROUP_CONCURRENCY", DEFAULT_WRITE_GROUP_CONCURRENCY, { min: 0, max: 64 }),
    // One event loop per process: by default one process per core (docs/benchmarks.md, "Both cores").
    workers: r.int("API_WORKERS", availableParallelism(), { min: 1, max: 64 }),
    workerIndex:
      r.optionalString("API_WORKER_INDEX") === undefined ? null : r.int("API_WORKER_INDEX", 0, { min: 0, max: 63 }),
    outboxRelay: readOutboxRelayLimits(r),
    leadCountCacheSeconds: r.int("LEAD_COUNT_CACHE_SECONDS", 3, { min: 0, max: 300 }),
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
  r.done();
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
