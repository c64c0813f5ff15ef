// The only place the marketplace reads its environment. Fails at boot with every problem listed. The buyer-facing
// settings keep the names they had when the API served buyers (TRUST_PROXY_CIDRS, LEAD_RATE_LIMIT_*, BUYER_STATS_*,
// MEDIA_*, PREVIEW_LINK_*), so a deployment moves them from the API's environment to this service's unchanged.
import { DEFAULT_SEARCH_ALIAS } from "@pss/contracts";
import { DEFAULT_SAVED_SEARCH_SETTINGS, type SavedSearchSettings } from "./saved-searches/saved-searches.ts";
import {
  DEFAULT_IDEMPOTENCY_RETENTION_HOURS,
  readPreviewLinkSecret,
  readTrustedProxiesSetting,
  type TrustedProxies,
} from "@pss/http-kit";
import {
  createEnvReader,
  developmentProfileNotice,
  readLimit,
  readLogLevel,
  readMediaStorageConfig,
  readOpenSearchConfig,
  readPostgresConfig,
  readPublicBaseUrl,
  readRedisConfig,
  readSearchAlias,
  readTracingConfig,
  type EnvReader,
  type LogLevel,
  type MediaStorageConfig,
  type OpenSearchConfig,
  type PostgresConfig,
  type RedisConfig,
  type TracingConfig,
} from "@pss/service-kit";

export const MEDIA_DELIVERIES = ["api", "redirect"] as const;
export type MediaDelivery = (typeof MEDIA_DELIVERIES)[number];

export interface MarketplaceConfig {
  /** Buyers' port (MARKETPLACE_PORT); the balancer sends every path but the partner API's here. */
  port: number;
  /** /healthz, /readyz and /metrics: a port of their own, apart from public traffic (HEALTH_PORT). */
  healthPort: number;
  publicBaseUrl: string;
  logLevel: LogLevel;
  /** The boot line outside NODE_ENV=production (null in production). */
  developmentProfile: string | null;
  /** Protections switched off on purpose with NODE_ENV=production (`<VARIABLE>_I_UNDERSTAND=true`): a warning each at boot. */
  productionOverrides: readonly string[];
  postgres: PostgresConfig;
  redis: RedisConfig;
  /** Spans to a Zipkin endpoint (TRACING_*), as every service sends them. */
  tracing: TracingConfig;
  opensearch: OpenSearchConfig;
  /** Alias buyers' search reads (the indexer writes it). */
  searchAlias: string;
  /** Largest accepted request body in bytes (an inquiry, JSON or form). */
  maxBodyBytes: number;
  /** Where the media service stores variants; GET /media/<name> serves them from there. */
  mediaStorage: MediaStorageConfig;
  /** `api`: the marketplace streams variants itself; `redirect`: 302 to a presigned object-storage URL (s3 only). */
  mediaDelivery: MediaDelivery;
  /** Lifetime of a presigned URL in redirect mode. */
  mediaPresignSeconds: number;
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
  /** How often buyer statistics (views, impressions) are flushed to PostgreSQL; 0 turns counting off. */
  buyerStatsFlushMs: number;
  /** Visitors counted per client address (IPv6: per /64) per listing per day, at most (docs/partner-api.md). */
  buyerStatsVisitorsPerAddress: number;
  /** Visitors counted per IPv6 /48 per listing per day, at most, however many /64s they come from. */
  buyerStatsVisitorsPerSite: number;
  /** Hours the answer to an inquiry sent with an Idempotency-Key is kept (the API's retention job deletes them). */
  idempotencyRetentionHours: number;
  /** HMAC key of preview links (the API's PREVIEW_LINK_SECRET); absent: the key kept in PostgreSQL. */
  previewLinkSecret?: string;
  /** Saved searches and their e-mail alerts (docs/buyers-and-search.md, "Saved searches"). */
  savedSearches: SavedSearchSettings & {
    /** Saves per client address (IPv6: per /64) and hour; 0: off. */
    savesPerAddressPerHour: number;
    /** Confirmation and notice e-mails per recipient and day; 0: off. */
    mailsPerRecipientPerDay: number;
    /** How often the digest job looks for digests due. */
    jobIntervalMs: number;
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

export function loadConfig(env: Record<string, string | undefined> = process.env): MarketplaceConfig {
  const r = createEnvReader(env);
  const port = r.int("MARKETPLACE_PORT", 8088, { min: 0, max: 65535 });
  const config: MarketplaceConfig = {
    port,
    healthPort: r.int("HEALTH_PORT", 8089, { min: 0, max: 65535 }),
    publicBaseUrl: readPublicBaseUrl(r, `http://127.0.0.1:${port}`),
    logLevel: readLogLevel(r),
    developmentProfile: developmentProfileNotice(r),
    productionOverrides: r.accepted(),
    postgres: readPostgresConfig(r, 20),
    redis: readRedisConfig(r),
    tracing: readTracingConfig(r, "pss-marketplace"),
    opensearch: readOpenSearchConfig(r),
    searchAlias: readSearchAlias(r, DEFAULT_SEARCH_ALIAS),
    maxBodyBytes: r.int("MAX_BODY_BYTES", 1_048_576, { min: 1024 }),
    mediaStorage: readMediaStorageConfig(r),
    mediaDelivery: r.oneOf("MEDIA_DELIVERY", MEDIA_DELIVERIES, "api"),
    mediaPresignSeconds: r.int("MEDIA_PRESIGN_SECONDS", 3600, { min: 60, max: 7 * 24 * 3600 }),
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
    buyerStatsFlushMs: r.int("BUYER_STATS_FLUSH_MS", 2000, { min: 0, max: 600_000 }),
    buyerStatsVisitorsPerAddress: r.int("BUYER_STATS_VISITORS_PER_ADDRESS", 3, { min: 1, max: 100 }),
    buyerStatsVisitorsPerSite: r.int("BUYER_STATS_VISITORS_PER_SITE", 12, { min: 1, max: 1000 }),
    idempotencyRetentionHours: r.int("IDEMPOTENCY_KEY_RETENTION_HOURS", DEFAULT_IDEMPOTENCY_RETENTION_HOURS, {
      min: 1,
      max: 30 * 24,
    }),
    previewLinkSecret: readPreviewLinkSecret(r),
    savedSearches: {
      maxPerAddress: r.int("SAVED_SEARCHES_PER_ADDRESS", DEFAULT_SAVED_SEARCH_SETTINGS.maxPerAddress, {
        min: 1,
        max: 100,
      }),
      digestIntervalSeconds: r.int(
        "SAVED_SEARCH_DIGEST_INTERVAL_SECONDS",
        DEFAULT_SAVED_SEARCH_SETTINGS.digestIntervalSeconds,
        { min: 1, max: 30 * 86_400 },
      ),
      confirmHours: r.int("SAVED_SEARCH_CONFIRM_HOURS", DEFAULT_SAVED_SEARCH_SETTINGS.confirmHours, {
        min: 1,
        max: 30 * 24,
      }),
      digestSize: DEFAULT_SAVED_SEARCH_SETTINGS.digestSize,
      indexLagSeconds: r.int("SAVED_SEARCH_INDEX_LAG_SECONDS", DEFAULT_SAVED_SEARCH_SETTINGS.indexLagSeconds, {
        min: 0,
        max: 3600,
      }),
      savesPerAddressPerHour: readLimit(
        r,
        "SAVED_SEARCH_RATE_LIMIT_PER_ADDRESS",
        10,
        "turns the limit of saved searches per client address off: one client can make the site send any number of confirmation e-mails",
      ),
      mailsPerRecipientPerDay: readLimit(
        r,
        "SAVED_SEARCH_MAILS_PER_RECIPIENT",
        3,
        "turns the limit of confirmation e-mails per recipient off: anyone can make the site mail a stranger's address over and over",
      ),
      jobIntervalMs: r.int("SAVED_SEARCH_JOB_INTERVAL_MS", 60_000, { min: 100, max: 3_600_000 }),
    },
  };
  if (config.mediaDelivery === "redirect" && config.mediaStorage.kind !== "s3") {
    r.problem("MEDIA_DELIVERY=redirect needs MEDIA_STORAGE=s3: a local directory has no URL to redirect to");
  }
  r.done();
  return config;
}
