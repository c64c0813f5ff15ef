// Composition root: the only place that creates clients, wires dependencies and handles shutdown.
import { topicSpecs } from "@pss/contracts";
import {
  loadConfigOrExit,
  startHealthServer,
  createKafka,
  createConsumerMetrics,
  createLogger,
  createMetrics,
  createOutageMetrics,
  createPostgres,
  createShutdown,
  ensureTopics,
  installCrashGuard,
  pingKafka,
  retryUntilDone,
  type ReadinessCheck,
} from "@pss/service-kit";
import { loadConfig } from "./config.ts";
import { createSmtpCheck, createSmtpTransport } from "./forwarding/smtp-transport.ts";
import { createLeadsMetrics } from "./leads-metrics.ts";
import { createLeadsWorkers } from "./leads-workers.ts";

const config = loadConfigOrExit("leads", loadConfig);

const logger = createLogger({ service: "leads", level: config.logLevel });
installCrashGuard(logger);
const sql = createPostgres(config.postgres, { applicationName: "pss-leads" });
const kafka = createKafka(config.kafka, logger);

const transport = config.smtp ? createSmtpTransport(config.smtp) : null;
if (!config.smtp) logger.warn("SMTP_HOST is not set: lead forwarding is paused; leads are counted and wait as pending until it is configured");

const metrics = createMetrics({ service: "leads" });
const workers = createLeadsWorkers({
  outageMetrics: createOutageMetrics(metrics, "leads"),
  metrics: {
    leads: createLeadsMetrics({ metrics, sql, logger }),
    consumer: createConsumerMetrics(metrics, { onError: (err) => logger.debug("consumer metrics unavailable", { err: (err as Error).message }) }),
  },
  sql,
  kafka,
  logger,
  groupPrefix: config.groupPrefix,
  session: config.kafka.consumer,
  publicBaseUrl: config.publicBaseUrl,
  mail: transport && config.smtp ? { transport, from: config.smtp.from, messageIdDomain: config.smtp.fromDomain } : null,
  // Claims (LEAD_DELIVERY_CLAIM_TIMEOUT_SECONDS, 5 min) outlive the worst-case SMTP exchange by a wide margin.
  policy: config.delivery,
  sweepIntervalMs: 5_000,
  firstAttemptGraceMs: 60_000,
});

let stopping = false;
const checks: Record<string, ReadinessCheck> = {
  postgres: () => sql`SELECT 1`,
  // An admin connection per probe is not free: at most one every 10 s.
  kafka: { run: () => pingKafka(kafka), everyMs: 10_000, timeoutMs: 2000 },
  consumers: async () => {
    if (!workers.isRunning()) throw new Error("not consuming");
  },
};
if (transport) checks.smtp = createSmtpCheck(transport);
const health = startHealthServer({
  service: "leads",
  port: config.healthPort,
  checks,
  metrics,
  isStopping: () => stopping,
  onCheckFailure: (name, err) => logger.debug("readiness check failing", { check: name, err: (err as Error).message }),
});
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

// Kafka may be down at boot: wait for it (not ready meanwhile) instead of exiting.
await retryUntilDone("create topics", () => ensureTopics(kafka, topicSpecs(config.kafka.topics), logger), { logger, isStopping: () => stopping });
if (await retryUntilDone("start consuming", () => workers.start().then(() => true), { logger, isStopping: () => stopping })) {
  logger.info("consuming lead events", { groupPrefix: config.groupPrefix });
}
