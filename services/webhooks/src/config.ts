// The only place the webhooks service reads its environment. Fails at boot with every problem listed.
import {
  developmentProfileNotice,
  createEnvReader,
  readAllowedHosts,
  readKafkaConfig,
  readLogLevel,
  readPostgresConfig,
  readPublicBaseUrl,
  readSecretKey,
  type KafkaConfig,
  type LogLevel,
  type PostgresConfig,
  readTracingConfig,
  type TracingConfig,
} from "@pss/service-kit";
import { DEFAULT_FAIR_SHARE } from "./delivery/delivery-repository.ts";
import { DEFAULT_RETRY_SCHEDULE, parseSchedule } from "./delivery/retry-schedule.ts";

const DAY_MS = 24 * 3600 * 1000;

export interface WebhooksConfig {
  healthPort: number;
  logLevel: LogLevel;
  /** Spans and where they go (TRACING_ZIPKIN_URL, TRACING_SAMPLE_RATIO, TRACING_SERVICE_NAME). */
  tracing: TracingConfig;
  /** The boot line outside NODE_ENV=production (null in production). */
  developmentProfile: string | null;
  /** Protections switched off on purpose with NODE_ENV=production (`<VARIABLE>_I_UNDERSTAND=true`): a warning each at boot. */
  productionOverrides: readonly string[];
  postgres: PostgresConfig;
  kafka: KafkaConfig;
  groupId: string;
  /** Consumer group of the report tracker (listing.report.changed), which follows listing, broker and partner events. */
  reportGroupId: string;
  /** Base of the public URLs added to event data: `{publicBaseUrl}/listings/{id}`, `/brokers/{id}`. */
  publicBaseUrl: string;
  /** Decrypts the endpoints' signing secrets (the API encrypts them with the same key). */
  secretKey: Buffer;
  /** host or host:port entries exempt from the private-address check (test receivers on loopback). */
  allowedHosts: string[];
  /** Whole attempt: connect, send, the receiver's answer. */
  timeoutMs: number;
  /** Delay before each attempt of a round; the first is 0 (immediately). */
  retryScheduleMs: number[];
  /** An endpoint whose every attempt failed for this long is disabled. */
  disableAfterMs: number;
  /** Deliveries in flight at once (this instance), for endpoints carrying lead data and for the others each. */
  concurrency: number;
  /** Deliveries in flight at once to one endpoint, and for one partner (per audience), across instances (fair sharing). */
  endpointConcurrency: number;
  partnerConcurrency: number;
  pollMs: number;
  /** A claimed attempt is taken up again by another worker this long after its timeout (its worker died). */
  claimMarginMs: number;
  /** Finished deliveries older than this many days are deleted; 0 keeps them. */
  retentionDays: number;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): WebhooksConfig {
  const r = createEnvReader(env);
  const rawSchedule = r.optionalString("WEBHOOK_RETRY_SCHEDULE") ?? DEFAULT_RETRY_SCHEDULE;
  const schedule = parseSchedule(rawSchedule);
  if (!schedule)
    r.problem(
      `WEBHOOK_RETRY_SCHEDULE must be a comma-separated list of 1 to 50 durations (e.g. ${DEFAULT_RETRY_SCHEDULE}), got '${rawSchedule}'`,
    );
  const config: WebhooksConfig = {
    healthPort: r.int("HEALTH_PORT", 8086, { min: 0, max: 65535 }),
    logLevel: readLogLevel(r),
    tracing: readTracingConfig(r, "pss-webhooks"),
    developmentProfile: developmentProfileNotice(r),
    productionOverrides: r.accepted(),
    postgres: readPostgresConfig(r, 5),
    kafka: readKafkaConfig(r, "pss-webhooks"),
    groupId: r.string("WEBHOOKS_CONSUMER_GROUP", "pss-webhooks"),
    reportGroupId: r.string("REPORT_TRACKER_CONSUMER_GROUP", "pss-report-tracker"),
    publicBaseUrl: readPublicBaseUrl(r, "http://127.0.0.1:8080"),
    secretKey: readSecretKey(r, "WEBHOOK_SECRET_KEY"),
    allowedHosts: readAllowedHosts(r, "WEBHOOK_ALLOWED_HOSTS", "partners' webhook endpoint URLs"),
    timeoutMs: r.int("WEBHOOK_TIMEOUT_MS", 10_000, { min: 100, max: 600_000 }),
    retryScheduleMs: schedule ?? parseSchedule(DEFAULT_RETRY_SCHEDULE)!,
    disableAfterMs: r.int("WEBHOOK_DISABLE_AFTER_MS", 5 * DAY_MS, { min: 1000 }),
    concurrency: r.int("WEBHOOK_CONCURRENCY", 16, { min: 1, max: 512 }),
    endpointConcurrency: r.int("WEBHOOK_ENDPOINT_CONCURRENCY", DEFAULT_FAIR_SHARE.endpointConcurrency, {
      min: 1,
      max: 512,
    }),
    partnerConcurrency: r.int("WEBHOOK_PARTNER_CONCURRENCY", DEFAULT_FAIR_SHARE.partnerConcurrency, {
      min: 1,
      max: 512,
    }),
    pollMs: r.int("WEBHOOK_POLL_MS", 1000, { min: 10, max: 60_000 }),
    claimMarginMs: r.int("WEBHOOK_CLAIM_MARGIN_MS", 20_000, { min: 100 }),
    retentionDays: r.int("WEBHOOK_RETENTION_DAYS", 30, { min: 0, max: 3650 }),
  };
  r.done();
  return config;
}
