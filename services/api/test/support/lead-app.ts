// An API instance with the lead options the shared harness leaves off (abuse limits, proxy trust, count
// cache), on the harness's own PostgreSQL and Redis clients.
import type Redis from "ioredis";
import type postgres from "postgres";
import { silentLogger, type Logger } from "@pss/service-kit";
import { createApp } from "../../src/app.ts";
import { createAuthenticator } from "../../src/auth/authenticator.ts";
import { createRateLimiter } from "../../src/http/rate-limiter.ts";
import { createLeadCountCache } from "../../src/lead-counts/lead-count-cache.ts";
import { testWebhookSecrets, uniqueName } from "../../../../test/support/env.ts";
import { LOOPBACK_PROXIES } from "./harness.ts";

export interface LeadAppOptions {
  perAddress?: number;
  perListingAddress?: number;
  global?: number;
  /** The test's requests (from loopback) come through a trusted proxy (TRUST_PROXY_CIDRS=127.0.0.0/8,::1). */
  trustProxy?: boolean;
  countCacheSeconds?: number;
  logger?: Logger;
}

export function startLeadApp(clients: { sql: postgres.Sql; redis: Redis }, opts: LeadAppOptions = {}) {
  const { sql, redis } = clients;
  const logger = opts.logger ?? silentLogger;
  // Unique limiter names: counters of other runs sharing this Redis never interfere.
  const limiter = (limit: number | undefined, name: string) =>
    limit ? createRateLimiter({ redis, logger, limit, windowSeconds: 3600, name: uniqueName(name) }) : undefined;
  const app = createApp({
    sql,
    logger,
    authenticator: createAuthenticator({ sql, redis, logger }),
    partnerRateLimiter: { check: async () => null },
    publicBaseUrl: "https://market.example.test",
    maxBodyBytes: 1_048_576,
    webhookSecrets: testWebhookSecrets(),
    leads: {
      addressLimiter: limiter(opts.perAddress, "lead-address"),
      listingAddressLimiter: limiter(opts.perListingAddress, "lead-listing-address"),
      globalLimiter: limiter(opts.global, "lead-global"),
      trustedProxies: opts.trustProxy ? LOOPBACK_PROXIES : undefined,
      countCache: opts.countCacheSeconds
        ? createLeadCountCache({ redis, logger, ttlSeconds: opts.countCacheSeconds })
        : undefined,
    },
  }).listen({ port: 0, hostname: "127.0.0.1" });
  return { baseUrl: `http://127.0.0.1:${app.server!.port}`, stop: () => app.stop() };
}
