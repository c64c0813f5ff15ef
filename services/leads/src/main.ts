// Composition root: the only place that creates clients; runService (service-kit) boots, checks and stops them.
import { topicSpecs } from "@pss/contracts";
import { createKafka, createPostgres, runService, startConsuming } from "@pss/service-kit";
import type { ServiceKit, ServiceParts } from "@pss/service-kit";
import { loadConfig } from "./config.ts";
import { createSmtpCheck, createSmtpTransport } from "./forwarding/smtp-transport.ts";
import { createLeadsMetrics } from "./leads-metrics.ts";
import { createLeadsWorkers } from "./leads-workers.ts";

await runService({ name: "leads", loadConfig, build });

function build(kit: ServiceKit<ReturnType<typeof loadConfig>>): ServiceParts {
  const { config, logger, metrics } = kit;
  const sql = createPostgres(config.postgres, { applicationName: "pss-leads" });
  const kafka = createKafka(config.kafka, logger);
  const transport = config.smtp ? createSmtpTransport(config.smtp) : null;
  if (!config.smtp)
    logger.warn(
      "SMTP_HOST is not set: lead forwarding is paused; leads are counted and wait as pending until it is configured",
    );
  const workers = createLeadsWorkers({
    tracing: kit.tracing,
    outageMetrics: kit.outageMetrics(),
    metrics: {
      leads: createLeadsMetrics({ metrics, sql, logger }),
      consumer: kit.consumerMetrics(),
    },
    sql,
    kafka,
    logger,
    groupPrefix: config.groupPrefix,
    session: config.kafka.consumer,
    publicBaseUrl: config.publicBaseUrl,
    mail:
      transport && config.smtp ? { transport, from: config.smtp.from, messageIdDomain: config.smtp.fromDomain } : null,
    // Claims (LEAD_DELIVERY_CLAIM_TIMEOUT_SECONDS, 5 min) outlive the worst-case SMTP exchange by a wide margin.
    policy: config.delivery,
    sweepIntervalMs: 5_000,
    firstAttemptGraceMs: 60_000,
  });
  return {
    clients: { sql, kafka },
    checks: { smtp: transport ? createSmtpCheck(transport) : null },
    topics: topicSpecs(config.kafka.topics),
    start: startConsuming(workers, "consumers"),
    started: () => logger.info("consuming lead events", { groupPrefix: config.groupPrefix }),
    stop: { "stop consumers and sweeper": () => workers.stop() },
    close: { "close smtp": () => transport?.close() },
    describe: { forwarding: transport ? "on" : "paused" },
  };
}
