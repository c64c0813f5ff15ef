// Starts the real marketplace in-process on a free port, on clients the test gives (usually the API harness's:
// services/api/test/support/harness.ts starts one beside every API, as the balancer puts them behind one address).
import type Redis from "ioredis";
import type postgres from "postgres";
import { Client as OpenSearchClient } from "@opensearch-project/opensearch";
import {
  createLocalMediaStorage,
  disabledTracing,
  serveTraced,
  silentLogger,
  type Logger,
  type MediaStorage,
  type Tracing,
} from "@pss/service-kit";
import {
  createAuthenticator,
  createRateLimiter,
  parseTrustedProxies,
  serverOptions,
  type PreviewLinks,
} from "@pss/http-kit";
import { createMarketplace } from "../../src/app.ts";
import { createBuyerService } from "../../src/buyers/buyer-service.ts";
import {
  createSavedSearches,
  DEFAULT_SAVED_SEARCH_SETTINGS,
  type SavedSearches,
  type SavedSearchSettings,
} from "../../src/saved-searches/saved-searches.ts";
import { createStatsRecorder, type StatsRecorder } from "../../src/stats/stats-recorder.ts";
import { testUrls, uniqueName } from "../../../../test/support/env.ts";

/** The proxy a test plays: its requests come from loopback with the client's X-Forwarded-For. */
export const LOOPBACK_PROXIES = parseTrustedProxies("127.0.0.0/8,::1").proxies;

export interface MarketplaceOptions {
  logger?: Logger;
  maxBodyBytes?: number;
  searchAlias?: string;
  opensearchUrl?: string;
  /** Listen on this port (default: any free one); answer as this public base URL (default https://market.example.test). */
  port?: number;
  publicBaseUrl?: string;
  /** Lead intake limits (per address, per listing and address, site-wide per minute), given the clients' Redis. */
  leadLimits?: { perAddress?: number; perListingAddress?: number; global?: number };
  mediaStorage?: MediaStorage;
  mediaDelivery?: "api" | "redirect";
  /** Buyer statistics flush interval (default 200 ms). */
  statsFlushMs?: number;
  /**
   * The test's own requests (from loopback) come through a trusted proxy: buyer statistics and lead intake take the
   * client address from X-Forwarded-For (TRUST_PROXY_CIDRS=127.0.0.0/8,::1).
   */
  trustProxy?: boolean;
  /** The API's preview links (same secret); absent: the key kept in PostgreSQL, as the API's default. */
  previews?: PreviewLinks;
  sitemapPageSize?: number;
  /** The marketplace's spans (default: nothing recorded). */
  tracing?: Tracing;
  /** Saved searches: settings over the defaults, and the limits per client address (an hour) and recipient (a day). */
  savedSearches?: Partial<SavedSearchSettings> & { perAddress?: number; perRecipient?: number };
}

export interface MarketplaceHarness {
  baseUrl: string;
  /** Buyer statistics as the marketplace counts them; flushes every 200 ms, and `flush()` writes what is buffered now. */
  stats: StatsRecorder;
  /** Its saved searches (runDigests: one round of the digest job, which the harness does not run by itself). */
  savedSearches: SavedSearches;
  routes: { method: string; path: string }[];
  stop(): Promise<void>;
}

export async function startMarketplace(
  clients: { sql: postgres.Sql; redis: Redis },
  opts: MarketplaceOptions = {},
): Promise<MarketplaceHarness> {
  const { sql, redis } = clients;
  const urls = testUrls();
  const logger = opts.logger ?? silentLogger;
  const trustedProxies = opts.trustProxy ? LOOPBACK_PROXIES : undefined;
  const tracing = opts.tracing ?? disabledTracing("pss-marketplace");
  // Unique limiter names: counters of other runs sharing this Redis never interfere.
  const limiter = (limit: number | undefined, windowSeconds: number, name: string) =>
    limit ? createRateLimiter({ redis, logger, limit, windowSeconds, name: uniqueName(name) }) : undefined;
  const stats = createStatsRecorder({
    sql,
    redis,
    logger,
    flushIntervalMs: opts.statsFlushMs ?? 200,
    trustedProxies,
  });
  stats.start();
  const publicBaseUrl = opts.publicBaseUrl ?? "https://market.example.test";
  // A unique alias unless the test names one: other engineers' tests share this OpenSearch.
  const opensearch = new OpenSearchClient({
    node: opts.opensearchUrl ?? urls.OPENSEARCH_URL,
    requestTimeout: 5000,
    maxRetries: 0,
  });
  const searchAlias = opts.searchAlias ?? uniqueName("unused-listings");
  const buyers = createBuyerService({ sql, opensearch, searchAlias, publicBaseUrl });
  const savedSearches = createSavedSearches({
    sql,
    logger,
    buyers,
    publicBaseUrl,
    settings: { ...DEFAULT_SAVED_SEARCH_SETTINGS, ...opts.savedSearches },
    addressLimiter: limiter(opts.savedSearches?.perAddress, 3600, "saved-search-address"),
    recipientLimiter: limiter(opts.savedSearches?.perRecipient, 86_400, "saved-search-recipient"),
  });
  const app = createMarketplace({
    sql,
    logger,
    publicBaseUrl,
    maxBodyBytes: opts.maxBodyBytes ?? 1_048_576,
    media: {
      storage: opts.mediaStorage ?? createLocalMediaStorage({ dir: process.env.MEDIA_DIR ?? ".data/media-test" }),
      delivery: opts.mediaDelivery,
    },
    opensearch,
    searchAlias,
    buyers,
    savedSearches,
    leads: {
      trustedProxies,
      addressLimiter: limiter(opts.leadLimits?.perAddress, 3600, "lead-address"),
      listingAddressLimiter: limiter(opts.leadLimits?.perListingAddress, 3600, "lead-listing-address"),
      globalLimiter: limiter(opts.leadLimits?.global, 3600, "lead-global"),
    },
    authenticator: createAuthenticator({ sql, redis, logger, recordLastUse: false }),
    previews: opts.previews,
    sitemapPageSize: opts.sitemapPageSize,
    stats,
    tracing,
  });
  // As main.ts serves it: every request in its server span (recorded only when the test gives a tracing).
  serveTraced(app, tracing, { port: opts.port ?? 0, hostname: "127.0.0.1", ...serverOptions(() => {}) });
  return {
    baseUrl: `http://127.0.0.1:${app.server!.port}`,
    stats,
    savedSearches,
    routes: app.routes.map((r) => ({ method: r.method, path: r.path })),
    async stop() {
      await app.stop();
      await stats.stop();
    },
  };
}
