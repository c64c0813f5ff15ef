// Starts the real API in-process on a free port, wired to the real PostgreSQL, Redis and Kafka from the
// test setup, and offers small helpers to call it the way a partner does. Beside it, on the same clients, the real
// marketplace (buyers' pages, search, inquiries, previews, images): `marketplaceUrl`, as the balancer puts both
// behind one address in a deployment.
import Redis from "ioredis";
import { Kafka, logLevel, Partitioners } from "kafkajs";
import type postgres from "postgres";
import { ALL_TOPICS } from "@pss/contracts";
import {
  createLogger,
  createPostgres,
  disabledTracing,
  ensureTopics,
  serveTraced,
  silentLogger,
  type Logger,
  type MediaStorage,
  type Tracing,
} from "@pss/service-kit";
import { createApp } from "../../src/app.ts";
import { createAuthenticator, createRateLimiter, serverOptions } from "@pss/http-kit";
import { createPartnerAdmin } from "../../src/admin/partner-admin.ts";
import { createOutboxRelay, type OutboxRelay } from "../../src/outbox/outbox-relay.ts";
import {
  LOOPBACK_PROXIES,
  startMarketplace,
  type MarketplaceHarness,
} from "../../../marketplace/test/support/marketplace-harness.ts";
import type { StatsRecorder } from "../../../marketplace/src/stats/stats-recorder.ts";
import { createRequestLog, type RequestLog } from "../../src/request-log/request-log.ts";
import { testUrls, testWebhookSecrets, uniqueName } from "../../../../test/support/env.ts";

export interface ApiHarness {
  /** The partner API. */
  baseUrl: string;
  /** The marketplace beside it (buyers' pages, search, inquiries, previews, images), on the same clients. */
  marketplaceUrl: string;
  marketplace: MarketplaceHarness;
  sql: postgres.Sql;
  redis: Redis;
  kafka: Kafka;
  relay: OutboxRelay;
  /** Buyer statistics as the marketplace counts them; flushes every 200 ms, and `flush()` writes what is buffered now. */
  stats: StatsRecorder;
  /** The request log (with `requestLog: true`): flushes every 100 ms; `flush()` writes what is buffered now. */
  requestLog: RequestLog | undefined;
  /** Every route the API registered (method and path pattern). */
  routes: { method: string; path: string }[];
  /** With `test`, the partner also gets a test key (pss_test_…) and `test` calls with it. */
  createPartner(opts?: { leadTracking?: boolean; test?: boolean }): Promise<Partner>;
  stop(): Promise<void>;
}

export interface Partner {
  partnerId: string;
  apiKey: string;
  keyId: string;
  /** Calls with the partner's test key (createPartner({ test: true })). */
  test?: {
    apiKey: string;
    keyId: string;
    put(path: string, body: unknown): Promise<TestResponse>;
    get(path: string): Promise<TestResponse>;
  };
  organizationId: number;
  officeId: number;
  put(path: string, body: unknown, init?: RequestInit): Promise<TestResponse>;
  get(path: string, init?: RequestInit): Promise<TestResponse>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
}

export async function call(
  baseUrl: string,
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<TestResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
    headers["content-type"] ??= "application/json";
  }
  const res = await fetch(baseUrl + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, body: parsed };
}

export interface ApiOptions {
  rateLimitPerMinute?: number;
  /** Webhook deliveries a partner may re-send per audience in 24 hours (default the API's). */
  webhookResendDailyBudget?: number;
  relay?: boolean;
  redisUrl?: string;
  logger?: Logger;
  maxBodyBytes?: number;
  searchAlias?: string;
  opensearchUrl?: string;
  /** Listen on this port (default: any free one) and answer as this public base URL (default https://market.example.test). */
  port?: number;
  /** The marketplace beside the API listens on this port (default: any free one). */
  marketplacePort?: number;
  publicBaseUrl?: string;
  /** The marketplace's lead intake limits (per address, per listing and address, site-wide), given the harness's Redis. */
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
  /** Another database than the test setup's (e.g. one a backup is restored into). */
  databaseUrl?: string;
  /** Record every partner request in the request log (the portal's "API requests"; off by default in tests). */
  requestLog?: boolean;
  /** The API's and its relay's spans (default: nothing recorded). */
  tracing?: Tracing;
  /** How long the relay keeps sent outbox rows (default an hour: tests find what they published); 0: deleted at once. */
  outboxRetentionMs?: number;
  /** Sees the text of every statement the API and its relay send (a diagnostic counts them). */
  onQuery?: (query: string) => void;
}

export { LOOPBACK_PROXIES };
/** `server` for a request handed to code directly: it came from loopback (the proxy above). */
export const LOOPBACK_PEER = { requestIP: () => ({ address: "127.0.0.1", family: "IPv4" as const, port: 1 }) };

export async function startApi(opts: ApiOptions = {}): Promise<ApiHarness> {
  const urls = testUrls();
  const logger = opts.logger ?? (process.env.TEST_LOGS ? createLogger({ service: "api-test" }) : silentLogger);
  // The API's own client settings (main.ts): a request answers 503 quickly while PostgreSQL cannot be reached.
  const sql = createPostgres(
    { url: opts.databaseUrl ?? urls.DATABASE_URL, maxConnections: 10 },
    { applicationName: "pss-api-test", connectTimeoutSeconds: 1.5, onQuery: opts.onQuery },
  );
  const redis = new Redis(opts.redisUrl ?? urls.REDIS_URL, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    lazyConnect: true,
    retryStrategy: () => 1000,
  });
  redis.on("error", () => {});
  await redis.connect().catch(() => {});
  const kafka = new Kafka({
    clientId: uniqueName("api-test"),
    brokers: urls.KAFKA_BROKERS.split(","),
    logLevel: logLevel.NOTHING,
    retry: { retries: 3, initialRetryTime: 200 },
  });
  await ensureTopics(kafka, ALL_TOPICS);
  const producer = kafka.producer({
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
    retry: { retries: 2 },
  });
  // Sent rows kept (OUTBOX_RETENTION_SECONDS, test/setup.ts): tests find what their database published by them.
  const tracing = opts.tracing ?? disabledTracing("pss-api");
  const relay = createOutboxRelay(
    { sql, producer: () => producer, logger, tracing },
    { maxBackoffMs: 1000, retentionMs: opts.outboxRetentionMs ?? 3_600_000 },
  );
  const requestLog = opts.requestLog ? createRequestLog({ sql, logger, flushIntervalMs: 100 }) : undefined;
  requestLog?.start();
  const app = createApp({
    sql,
    logger,
    authenticator: createAuthenticator({ sql, redis, logger }),
    partnerRateLimiter: createRateLimiter({
      redis,
      logger,
      limit: opts.rateLimitPerMinute ?? 0,
      windowSeconds: 60,
      name: uniqueName("partner"),
    }),
    publicBaseUrl: opts.publicBaseUrl ?? "https://market.example.test",
    maxBodyBytes: opts.maxBodyBytes ?? 1_048_576,
    webhookSecrets: testWebhookSecrets(),
    webhookResendDailyBudget: opts.webhookResendDailyBudget,
    requestLog,
    tracing,
  });
  // As main.ts serves it: every request in its server span (recorded only when the test gives a tracing).
  serveTraced(app, tracing, { port: opts.port ?? 0, hostname: "127.0.0.1", ...serverOptions(() => {}) });
  if (opts.relay !== false) relay.start();
  const baseUrl = `http://127.0.0.1:${app.server!.port}`;
  const marketplace = await startMarketplace(
    { sql, redis },
    {
      logger,
      maxBodyBytes: opts.maxBodyBytes,
      searchAlias: opts.searchAlias,
      opensearchUrl: opts.opensearchUrl,
      port: opts.marketplacePort,
      publicBaseUrl: opts.publicBaseUrl,
      leadLimits: opts.leadLimits,
      mediaStorage: opts.mediaStorage,
      mediaDelivery: opts.mediaDelivery,
      statsFlushMs: opts.statsFlushMs,
      trustProxy: opts.trustProxy,
      tracing: opts.tracing,
    },
  );
  const admin = createPartnerAdmin({ sql, redis });

  return {
    baseUrl,
    marketplaceUrl: marketplace.baseUrl,
    marketplace,
    sql,
    redis,
    kafka,
    relay,
    stats: marketplace.stats,
    requestLog,
    routes: app.routes.map((r) => ({ method: r.method, path: r.path })),
    async createPartner(o = {}) {
      const created = await admin.createPartner({
        name: uniqueName("partner"),
        leadTracking: o.leadTracking ?? false,
        test: o.test ?? false,
      });
      const testKey = created.testApiKey;
      return {
        ...created,
        put: (path, body) => call(baseUrl, "PUT", path, { key: created.apiKey, body }),
        get: (path) => call(baseUrl, "GET", path, { key: created.apiKey }),
        test: testKey
          ? {
              apiKey: testKey,
              keyId: created.testKeyId!,
              put: (path: string, body: unknown) => call(baseUrl, "PUT", path, { key: testKey, body }),
              get: (path: string) => call(baseUrl, "GET", path, { key: testKey }),
            }
          : undefined,
      };
    },
    async stop() {
      await app.stop();
      await marketplace.stop();
      await requestLog?.stop();
      await relay.stop();
      await sql.end({ timeout: 5 });
      redis.disconnect();
    },
  };
}

/** Realistic bodies partners send. */
export const sample = {
  broker: (overrides: Record<string, unknown> = {}) => ({
    name: "Jane Broker",
    email: "jane.broker@example.com",
    phone: "+1 512 555 0100",
    forwardingEmail: "leads@crm.example.com",
    profile: { bio: "Twenty years selling Texas businesses.", website: "https://jane.example.com" },
    licenses: [{ licenseNumber: "TX-123", state: "TX", country: "US" }],
    serviceAreas: [{ city: "Austin", state: "TX", country: "US" }],
    ...overrides,
  }),
  listing: (brokerExternalId: string, overrides: Record<string, unknown> = {}) => ({
    brokerExternalId,
    status: "FOR_SALE",
    businessType: "Restaurant",
    title: "Profitable taqueria downtown",
    description: "Established restaurant with loyal customers.",
    location: {
      streetAddress1: "1 Congress Ave",
      city: "Austin",
      state: "TX",
      postalCode: "78701",
      country: "US",
      visibility: "SHOW_CITY_STATE",
    },
    financials: { askingPrice: 450000, revenue: 900000, sde: 180000 },
    property: {
      propertyKind: "RENTED",
      areaSqft: 2400,
      rentData: { amount: 6500, frequency: "MONTHLY", leaseRenewable: true },
    },
    financing: { financingAvailable: true, sbaPrequalified: false },
    photos: [
      { url: "https://images.example.com/front.jpg", sortKey: 1 },
      { url: "https://images.example.com/kitchen.jpg", sortKey: 2 },
    ],
    ...overrides,
  }),
};
