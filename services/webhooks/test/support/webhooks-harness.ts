// The real webhooks service in-process against the test PostgreSQL and Kafka: a unique consumer group that starts
// at the end of the facts topic, confined to the partners a test registers (other engineers' tests share both),
// with its own metrics registry, loopback receivers allowed and a retry schedule short enough for tests.
import { Kafka, logLevel } from "kafkajs";
import postgres from "postgres";
import { Topics } from "@pss/contracts";
import { createLogger, createMetrics, silentLogger, type Logger, type Metrics } from "@pss/service-kit";
import { startGroupAtEnd } from "../../../../test/support/consumer-groups.ts";
import { testUrls, uniqueName } from "../../../../test/support/env.ts";
import { parsePrometheusText, valueOf } from "../../../../test/support/prometheus-text.ts";
import { loadConfig } from "../../src/config.ts";
import { createWebhooksMetrics } from "../../src/webhooks-metrics.ts";
import { createWebhooksService, type WebhooksService, type WebhooksServiceDeps } from "../../src/webhooks-service.ts";

export interface WebhooksHarness {
  service: WebhooksService;
  partners: Set<string>;
  metrics: Metrics;
  /** The value of one metric sample (summed over matching label sets) as /metrics would show it now. */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  stop(): Promise<void>;
}

/** Settings every webhooks test uses: receivers on loopback allowed, seconds instead of hours. */
export function testWebhooksEnv(
  allowedHosts: string[],
  overrides: Record<string, string> = {},
): Record<string, string> {
  return {
    WEBHOOK_ALLOWED_HOSTS: allowedHosts.join(","),
    WEBHOOK_RETRY_SCHEDULE: "0,300ms,600ms",
    WEBHOOK_TIMEOUT_MS: "2000",
    WEBHOOK_CLAIM_MARGIN_MS: "1000",
    WEBHOOK_POLL_MS: "100",
    // The retention sweep deletes across the whole database: not in tests.
    WEBHOOK_RETENTION_DAYS: "0",
    ...overrides,
  };
}

export async function startWebhooks(
  opts: {
    allowedHosts: string[];
    publicBaseUrl: string;
    partners?: Iterable<string>;
    env?: Record<string, string>;
    logger?: Logger;
    /** Where the service reaches PostgreSQL (a gated proxy in outage tests); default the test database. */
    databaseUrl?: string;
  } & Pick<WebhooksServiceDeps, "outageMetrics" | "outageBackoff">,
): Promise<WebhooksHarness> {
  const urls = testUrls();
  const groupId = uniqueName("webhooks-test");
  const config = loadConfig({
    DATABASE_URL: urls.DATABASE_URL,
    KAFKA_BROKERS: urls.KAFKA_BROKERS,
    WEBHOOK_SECRET_KEY: process.env.WEBHOOK_SECRET_KEY,
    WEBHOOKS_CONSUMER_GROUP: groupId,
    REPORT_TRACKER_CONSUMER_GROUP: `${groupId}-reports`,
    PUBLIC_BASE_URL: opts.publicBaseUrl,
    ...testWebhooksEnv(opts.allowedHosts, opts.env),
  });
  const logger =
    opts.logger ?? (process.env.TEST_LOGS ? createLogger({ service: "webhooks-test", level: "debug" }) : silentLogger);
  // Reconnects as the services' client does (service-kit clients.ts), not after postgres.js's default of up to 20 s.
  const sql = postgres(opts.databaseUrl ?? urls.DATABASE_URL, { max: 5, onnotice: () => {}, backoff: () => 0.2 });
  const kafka = new Kafka({
    clientId: groupId,
    brokers: urls.KAFKA_BROKERS.split(","),
    logLevel: logLevel.NOTHING,
    retry: { retries: 5, initialRetryTime: 200 },
  });
  await startGroupAtEnd(kafka, groupId, [Topics.partnerEvents.name]);
  await startGroupAtEnd(kafka, `${groupId}-reports`, [
    Topics.listingEvents.name,
    Topics.brokerEvents.name,
    Topics.partnerEvents.name,
  ]);
  const partners = new Set(opts.partners ?? []);
  const metrics = createMetrics({ service: "webhooks", defaultMetrics: false });
  const service = createWebhooksService({
    config,
    sql,
    kafka,
    logger,
    onlyPartners: partners,
    outageMetrics: opts.outageMetrics,
    outageBackoff: opts.outageBackoff,
    metrics: {
      webhooks: createWebhooksMetrics({ metrics, sql, logger, maxAgeMs: 0 }),
      consumer: { count() {}, observeHandler() {}, watch: () => async () => {} },
    },
  });
  await service.start();
  return {
    service,
    partners,
    metrics,
    async metric(name, labels = {}) {
      return valueOf(parsePrometheusText(await metrics.render()), name, labels) ?? 0;
    },
    async stop() {
      await service.stop();
      await sql.end({ timeout: 5 });
    },
  };
}

export async function until<T>(
  what: string,
  check: () => Promise<T | null | undefined | false> | T | null | undefined | false,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await Bun.sleep(50);
  }
}
