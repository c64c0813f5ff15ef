// Composition root: the only place that creates clients; runService (service-kit) boots, checks and stops them.
import { topicSpecs } from "@pss/contracts";
import { createKafka, createPostgres, runService, startConsuming } from "@pss/service-kit";
import type { ServiceKit, ServiceParts } from "@pss/service-kit";
import { loadConfig } from "./config.ts";
import { createWebhooksMetrics } from "./webhooks-metrics.ts";
import { createWebhooksService } from "./webhooks-service.ts";

await runService({ name: "webhooks", loadConfig, build });

function build(kit: ServiceKit<ReturnType<typeof loadConfig>>): ServiceParts {
  const { config, logger, metrics } = kit;
  const sql = createPostgres(config.postgres, { applicationName: "pss-webhooks" });
  const kafka = createKafka(config.kafka, logger);
  const webhooks = createWebhooksService({
    tracing: kit.tracing,
    config,
    sql,
    kafka,
    logger,
    outageMetrics: kit.outageMetrics(),
    metrics: {
      webhooks: createWebhooksMetrics({ metrics, sql, logger }),
      consumer: kit.consumerMetrics(),
    },
  });
  return {
    clients: { sql, kafka },
    topics: topicSpecs(config.kafka.topics),
    start: startConsuming(webhooks),
    started: () =>
      logger.info("delivering webhooks", {
        groupId: config.groupId,
        concurrency: config.concurrency,
        timeoutMs: config.timeoutMs,
      }),
    stop: { "stop consuming and delivering": () => webhooks.stop() },
    // The consumer step waits for the deliveries in flight, each bounded by WEBHOOK_TIMEOUT_MS. An attempt cut
    // short by SIGKILL is not lost: its claim expires and it is sent again with the same webhook-id.
    shutdown: { stepTimeoutMs: config.timeoutMs + 10_000 },
  };
}
