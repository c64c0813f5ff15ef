// Composition root: the only place that creates clients; runService (service-kit) boots, checks and stops them.
import {
  createHttpMetrics,
  createPeriodicJob,
  createPostgres,
  createSecretBox,
  runService,
  serveTraced,
  type ServiceKit,
  type ServiceParts,
} from "@pss/service-kit";
import { createSmtpCheck, createSmtpTransport } from "@pss/service-kit/smtp";
import { createPreviewLinks } from "@pss/http-kit";
import { createPortalApp } from "./app.ts";
import { createInvitationSender } from "./auth/invitations.ts";
import { createPortalMailer } from "./auth/mailer.ts";
import { createSessions } from "./auth/sessions.ts";
import { createSignIn } from "./auth/sign-in.ts";
import { loadConfig, type PortalConfig } from "./config.ts";

await runService({ name: "portal", loadConfig, build });

function build({ config, logger, metrics, tracing }: ServiceKit<PortalConfig>): ServiceParts {
  // A short connect timeout: while PostgreSQL is unreachable, pages answer 503 quickly instead of hanging.
  const sql = createPostgres(config.postgres, { applicationName: "pss-portal", connectTimeoutSeconds: 1.5 });
  const transport = config.smtp ? createSmtpTransport(config.smtp) : null;
  if (!config.smtp)
    logger.warn(
      "SMTP_HOST is not set: sign-in links and invitations are written to this log instead of e-mailed (development only)",
    );
  const mailer = createPortalMailer({ transport, smtp: config.smtp, logger });
  const sessions = createSessions({
    sql,
    onError: (err) => logger.debug("recording a session's last use failed", { err: err.message }),
  });
  const signIn = createSignIn({
    sql,
    sessions,
    mailer,
    portalUrl: config.portalUrl,
    limits: { perAddress: config.signInLimitPerAddress, perEmail: config.signInLimitPerEmail },
    logger,
  });
  const invitations = createInvitationSender({ sql, mailer, portalUrl: config.portalUrl, logger });
  // Ended sessions, used links and day-old sign-in requests: any instance may delete them, at any time.
  const cleanup = createPeriodicJob({
    name: "portal cleanup",
    logger,
    tick: async () => {
      const removed = await sessions.cleanUp();
      if (removed.sessions + removed.links + removed.requests > 0) logger.info("portal cleanup", removed);
    },
    intervalMs: 15 * 60_000,
    firstDelayMs: 60_000,
  });
  const app = createPortalApp({
    sql,
    logger,
    signIn,
    sessions,
    publicBaseUrl: config.publicBaseUrl,
    portalUrl: config.portalUrl,
    previews: createPreviewLinks({
      sql,
      publicBaseUrl: config.publicBaseUrl,
      secret: config.previewLinkSecret,
      ttlSeconds: config.previewLinkTtlSeconds,
    }),
    trustedProxies: config.trustedProxies,
    httpMetrics: createHttpMetrics(metrics),
    overviewCacheMs: config.overviewCacheSeconds * 1000,
    webhookSecrets: createSecretBox(config.webhookSecretKey),
    resendDailyBudget: config.resendDailyBudget,
  });
  // Every request in its server span (service-kit tracing-http.ts), as the API's.
  serveTraced(app, tracing, {
    port: config.port,
    hostname: "0.0.0.0",
    development: false,
    maxRequestBodySize: 64 * 1024,
  });
  logger.info("listening", { port: config.port, portalUrl: config.portalUrl, mail: transport ? "smtp" : "log" });
  invitations.start();
  cleanup.start();
  return {
    clients: { sql },
    checks: {
      smtp: transport ? { run: createSmtpCheck(transport), required: false, everyMs: 30_000, timeoutMs: 5000 } : null,
    },
    stopIntake: () => app.stop(),
    stop: {
      "stop invitations": () => invitations.stop(),
      "stop cleanup": () => cleanup.stop(),
      "finish sign-in e-mails": () => signIn.settle(),
    },
    close: { "close smtp": () => transport?.close() },
    describe: { mail: transport ? "smtp" : "log" },
  };
}
