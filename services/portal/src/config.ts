// The only place the portal reads its environment. Fails at boot with every problem listed.
import {
  createEnvReader,
  developmentProfileNotice,
  isLoopbackHost,
  isProduction,
  readLimit,
  readLogLevel,
  readPostgresConfig,
  readPublicBaseUrl,
  readSecretKey,
  readTracingConfig,
  type LogLevel,
  type PostgresConfig,
  type TracingConfig,
} from "@pss/service-kit";
import { readSmtpConfig, type SmtpConfig } from "@pss/service-kit/smtp";
import { readPreviewLinkSecret, readTrustedProxiesSetting, type TrustedProxies } from "@pss/http-kit";
import { DEFAULT_RESEND_DAILY_BUDGET } from "@pss/api/webhook-actions";

export interface PortalConfig {
  /** The portal's pages (PORTAL_PORT); the balancer sends /portal/ here. */
  port: number;
  /** /healthz, /readyz and /metrics (HEALTH_PORT). */
  healthPort: number;
  logLevel: LogLevel;
  /** Spans of every page and form (TRACING_ZIPKIN_URL, TRACING_SAMPLE_RATIO): off unless set. */
  tracing: TracingConfig;
  developmentProfile: string | null;
  productionOverrides: readonly string[];
  postgres: PostgresConfig;
  /** The public address of the API and buyers' pages: listing links, image URLs (PUBLIC_BASE_URL). */
  publicBaseUrl: string;
  /** The portal's own address as people open it, ending in /portal: links in e-mails, cookies' Secure flag. */
  portalUrl: string;
  /** null: SMTP_HOST unset; outside production the sign-in links are then written to the log instead. */
  smtp: SmtpConfig | null;
  /** Sign-in link requests per hour per client address (IPv6: per /64) and per e-mail address. */
  signInLimitPerAddress: number;
  signInLimitPerEmail: number;
  /** The proxies whose X-Forwarded-For is believed (TRUST_PROXY_CIDRS, as the API's): none by default. */
  trustedProxies: TrustedProxies;
  /** PREVIEW_LINK_SECRET, as the API's: preview links of test records (absent: the key kept in PostgreSQL). */
  previewLinkSecret?: string;
  previewLinkTtlSeconds: number;
  /** Seconds the overview's figures are shared by the views of one partner and mode (0: computed for each view). */
  overviewCacheSeconds: number;
  /** WEBHOOK_SECRET_KEY (or _FILE), the API's: a secret rotated in the portal is stored encrypted with it. */
  webhookSecretKey: Buffer;
  /** WEBHOOK_RESEND_DAILY_BUDGET, the API's: the portal's resends, replays and tests draw from the same budget. */
  resendDailyBudget: number;
}

export const PORTAL_MAIL = {
  withoutIt: "nobody can sign in to the partner portal (sign-in links go by e-mail)",
  sinkMeans: "sign-in links would never reach the partners' staff",
};

export function loadConfig(env: Record<string, string | undefined> = process.env): PortalConfig {
  const r = createEnvReader(env);
  const problems: string[] = [];
  const smtp = readSmtpConfig(r, problems, PORTAL_MAIL);
  const publicBaseUrl = readPublicBaseUrl(r, "http://127.0.0.1:8080");
  const givenPortalUrl = r.optionalString("PORTAL_URL");
  const portalUrl = r.url("PORTAL_URL", `${publicBaseUrl}/portal`).replace(/\/+$/, "");
  if (!new URL(portalUrl).pathname.endsWith("/portal"))
    problems.push(`PORTAL_URL must end in /portal (the path the portal serves), got '${portalUrl}'`);
  // Derived from PUBLIC_BASE_URL, whose own check says it once.
  if (givenPortalUrl !== undefined && isProduction(r) && isLoopbackHost(new URL(portalUrl).hostname))
    problems.push(
      `PORTAL_URL is a loopback address (${portalUrl}) with NODE_ENV=production: sign-in links would not work; set PUBLIC_BASE_URL (or PORTAL_URL) to the public address`,
    );
  const config: PortalConfig = {
    port: r.int("PORTAL_PORT", 8090, { min: 0, max: 65535 }),
    healthPort: r.int("HEALTH_PORT", 8087, { min: 0, max: 65535 }),
    logLevel: readLogLevel(r),
    tracing: readTracingConfig(r, "pss-portal"),
    developmentProfile: developmentProfileNotice(r),
    productionOverrides: [],
    postgres: readPostgresConfig(r, 10),
    publicBaseUrl,
    portalUrl,
    smtp,
    signInLimitPerAddress: readLimit(
      r,
      "PORTAL_SIGN_IN_LIMIT_PER_ADDRESS",
      20,
      "turns the sign-in link limit per address off: one client can send sign-in e-mails to any number of addresses",
    ),
    signInLimitPerEmail: readLimit(
      r,
      "PORTAL_SIGN_IN_LIMIT_PER_EMAIL",
      5,
      "turns the sign-in link limit per e-mail address off: anyone can flood a person's inbox with sign-in links",
    ),
    trustedProxies: readTrustedProxiesSetting(r, "the sign-in link limits per address"),
    previewLinkSecret: readPreviewLinkSecret(r),
    previewLinkTtlSeconds: r.int("PREVIEW_LINK_TTL_SECONDS", 3600, { min: 60, max: 7 * 24 * 3600 }),
    overviewCacheSeconds: r.int("PORTAL_OVERVIEW_CACHE_SECONDS", 10, { min: 0, max: 3600 }),
    webhookSecretKey: readSecretKey(r, "WEBHOOK_SECRET_KEY"),
    resendDailyBudget: r.int("WEBHOOK_RESEND_DAILY_BUDGET", DEFAULT_RESEND_DAILY_BUDGET, { min: 1, max: 10_000_000 }),
  };
  config.productionOverrides = r.accepted();
  for (const p of problems) r.problem(p);
  r.done();
  return config;
}
