// Composition root: the only place that creates clients, wires dependencies and handles shutdown.
import { ALL_TOPICS } from "@pss/contracts";
import { ConfigError, startHealthServer, createKafka, createLogger, createPostgres, createShutdown, ensureTopics, pingKafka, type ReadinessCheck } from "@pss/service-kit";
import { loadConfig, type LeadsConfig } from "./config.ts";
import { createSmtpCheck, createSmtpTransport } from "./forwarding/smtp-transport.ts";
import { createLeadsWorkers } from "./leads-workers.ts";

let config: LeadsConfig;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(`leads: ${err.message}`);
    process.exit(1);
  }
  throw err;
}

const logger = createLogger({ service: "leads", level: config.logLevel });
const sql = createPostgres(config.postgres, { applicationName: "pss-leads" });
const kafka = createKafka(config.kafka, logger);
await ensureTopics(kafka, ALL_TOPICS);

const transport = config.smtp ? createSmtpTransport(config.smtp) : null;
if (!config.smtp) logger.warn("SMTP_HOST is not set: lead forwarding is paused; leads are counted and wait as pending until it is configured");

const workers = createLeadsWorkers({
  sql,
  kafka,
  logger,
  groupPrefix: config.groupPrefix,
  publicBaseUrl: config.publicBaseUrl,
  mail: transport && config.smtp ? { transport, from: config.smtp.from, messageIdDomain: config.smtp.fromDomain } : null,
  // Claims outlive the worst-case SMTP exchange (connect + greeting + socket timeouts) by a wide margin.
  policy: { ...config.delivery, claimTimeoutMs: 5 * 60_000 },
  sweepIntervalMs: 5_000,
  firstAttemptGraceMs: 60_000,
});

let stopping = false;
const checks: Record<string, ReadinessCheck> = { postgres: () => sql`SELECT 1`, kafka: () => pingKafka(kafka) };
if (transport) checks.smtp = createSmtpCheck(transport);
const health = startHealthServer({ service: "leads", port: config.healthPort, checks, isStopping: () => stopping });
logger.info("health endpoint listening", { port: config.healthPort, forwarding: transport ? "on" : "paused" });

const shutdown = createShutdown(logger);
shutdown.register("mark not ready", () => {
  stopping = true;
});
shutdown.register("stop consumers and sweeper", () => workers.stop());
shutdown.register("stop health endpoint", () => health.stop());
shutdown.register("close smtp", () => transport?.close());
shutdown.register("close postgres", () => sql.end({ timeout: 5 }));
shutdown.listen();

await workers.start();
logger.info("consuming lead events", { groupPrefix: config.groupPrefix });
