// An API instance with the lead-count cache the shared harness leaves off, on the harness's own PostgreSQL and Redis
// clients. (Lead intake, with its abuse limits and proxy trust, is the marketplace's: its harness takes those.)
import type Redis from "ioredis";
import type postgres from "postgres";
import { silentLogger, type Logger } from "@pss/service-kit";
import { createAuthenticator } from "@pss/http-kit";
import { createApp } from "../../src/app.ts";
import { createLeadCountCache } from "../../src/lead-counts/lead-count-cache.ts";
import { testWebhookSecrets } from "../../../../test/support/env.ts";

export interface LeadAppOptions {
  countCacheSeconds?: number;
  logger?: Logger;
}

export function startLeadApp(clients: { sql: postgres.Sql; redis: Redis }, opts: LeadAppOptions = {}) {
  const { sql, redis } = clients;
  const logger = opts.logger ?? silentLogger;
  const app = createApp({
    sql,
    logger,
    authenticator: createAuthenticator({ sql, redis, logger }),
    partnerRateLimiter: { check: async () => null },
    publicBaseUrl: "https://market.example.test",
    maxBodyBytes: 1_048_576,
    webhookSecrets: testWebhookSecrets(),
    leadCounts: {
      countCache: opts.countCacheSeconds
        ? createLeadCountCache({ redis, logger, ttlSeconds: opts.countCacheSeconds })
        : undefined,
    },
  }).listen({ port: 0, hostname: "127.0.0.1" });
  return { baseUrl: `http://127.0.0.1:${app.server!.port}`, stop: () => app.stop() };
}
