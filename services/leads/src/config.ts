// The only place the leads service reads its environment. Fails at boot with every problem listed.
import {
  developmentProfileNotice,
  createEnvReader,
  readKafkaConfig,
  readLogLevel,
  readPostgresConfig,
  readPublicBaseUrl,
  type KafkaConfig,
  type LogLevel,
  type PostgresConfig,
  readTracingConfig,
  type TracingConfig,
} from "@pss/service-kit";
import { readSmtpConfig, type SmtpConfig } from "@pss/service-kit/smtp";

export interface LeadsConfig {
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
  /** Consumer groups are <prefix>-counter and <prefix>-mailer. */
  groupPrefix: string;
  /** Base of the listing URL in lead e-mails: {publicBaseUrl}/listings/{id}. */
  publicBaseUrl: string;
  /** null: SMTP_HOST not set, forwarding paused (leads wait as pending). */
  smtp: SmtpConfig | null;
  /**
   * claimTimeoutMs: a lead left 'sending' this long was abandoned by a worker that died mid-send (SIGKILL, host
   * lost) and is sent by another; it must outlive the slowest SMTP exchange, or a slow send could be doubled.
   */
  delivery: { maxAttempts: number; retryBaseMs: number; claimTimeoutMs: number };
}

export function loadConfig(env: Record<string, string | undefined> = process.env): LeadsConfig {
  const r = createEnvReader(env);
  const problems: string[] = [];
  const smtp = readSmtpConfig(r, problems);
  const config: LeadsConfig = {
    healthPort: r.int("HEALTH_PORT", 8083, { min: 0, max: 65535 }),
    logLevel: readLogLevel(r),
    tracing: readTracingConfig(r, "pss-leads"),
    developmentProfile: developmentProfileNotice(r),
    productionOverrides: r.accepted(),
    postgres: readPostgresConfig(r, 5),
    kafka: readKafkaConfig(r, "pss-leads"),
    groupPrefix: r.string("LEADS_GROUP_PREFIX", "pss-leads"),
    publicBaseUrl: readPublicBaseUrl(r, "http://127.0.0.1:8080"),
    smtp,
    delivery: {
      maxAttempts: r.int("LEAD_DELIVERY_MAX_ATTEMPTS", 8, { min: 1, max: 100 }),
      retryBaseMs: r.int("LEAD_DELIVERY_RETRY_SECONDS", 30, { min: 1, max: 3600 }) * 1000,
      claimTimeoutMs: r.int("LEAD_DELIVERY_CLAIM_TIMEOUT_SECONDS", 300, { min: 5, max: 86_400 }) * 1000,
    },
  };
  for (const p of problems) r.problem(p);
  r.done();
  return config;
}
