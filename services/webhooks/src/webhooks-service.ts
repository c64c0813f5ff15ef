// The webhooks service as a factory: the Kafka consumer that turns facts into deliveries, the worker that sends
// them, and the retention cleanup, wired from config and the clients main.ts (or a test) created.
import { Topics } from "@pss/contracts";
import { createEventConsumer, createSecretBox, type Logger, type Resolver } from "@pss/service-kit";
import type { Kafka } from "kafkajs";
import type postgres from "postgres";
import type { WebhooksConfig } from "./config.ts";
import { createDeliveryRepository } from "./delivery/delivery-repository.ts";
import { createDeliveryWorker, type DeliveryWorker } from "./delivery/delivery-worker.ts";
import type { AttemptOutcome } from "./delivery/outcome.ts";
import { createSender } from "./delivery/sender.ts";
import { createFactHandler } from "./fan-out/fact-handler.ts";
import { createDeliveryCleanup } from "./retention/delivery-cleanup.ts";

export type WebhooksServiceConfig = Omit<WebhooksConfig, "healthPort" | "logLevel" | "postgres" | "kafka">;

export interface WebhooksServiceDeps {
  config: WebhooksServiceConfig;
  sql: postgres.Sql;
  kafka: Kafka;
  logger: Logger;
  resolve?: Resolver;
  /** Confine this instance to these partners (tests share Kafka and PostgreSQL). */
  onlyPartners?: ReadonlySet<string>;
}

/** Endpoints by state (metrics): enabled and answering, enabled but failing, or disabled and why. */
export type EndpointState = "active" | "failing" | "disabled_by_partner" | "disabled_gone" | "disabled_failing";

export interface WebhooksService {
  start(): Promise<void>;
  /** Stops intake, lets the deliveries in flight finish and be recorded, commits offsets. */
  stop(): Promise<void>;
  isRunning(): boolean;
  /** Attempts by outcome since start. */
  outcomes(): Record<AttemptOutcome, number>;
  endpointStates(): Promise<Record<EndpointState, number>>;
  worker: DeliveryWorker;
}

export function createWebhooksService(deps: WebhooksServiceDeps): WebhooksService {
  const { config } = deps;
  const logger = deps.logger.child({ component: "webhooks" });
  const outcomes: Record<AttemptOutcome, number> = { delivered: 0, retry_scheduled: 0, failed: 0, endpoint_gone: 0, endpoint_disabled: 0, discarded: 0 };
  const worker = createDeliveryWorker({
    repository: createDeliveryRepository(deps.sql, { disableAfterMs: config.disableAfterMs }),
    sender: createSender({ timeoutMs: config.timeoutMs, allowedHosts: config.allowedHosts, resolve: deps.resolve }),
    secrets: createSecretBox(config.secretKey),
    logger,
    concurrency: config.concurrency,
    pollMs: config.pollMs,
    leaseMs: config.timeoutMs + config.claimMarginMs,
    retryScheduleMs: config.retryScheduleMs,
    partners: () => (deps.onlyPartners ? [...deps.onlyPartners] : null),
    onOutcome: (outcome) => void outcomes[outcome]++,
  });
  const consumer = createEventConsumer({
    kafka: deps.kafka,
    groupId: config.groupId,
    topics: [Topics.partnerEvents.name],
    deadLetterTopic: Topics.webhooksDeadLetter.name,
    logger,
    partitionsConsumedConcurrently: Topics.partnerEvents.partitions,
    handle: createFactHandler({ sql: deps.sql, logger, publicBaseUrl: config.publicBaseUrl, onDeliveriesCreated: () => worker.wake(), onlyPartners: deps.onlyPartners }),
  });
  const cleanup = createDeliveryCleanup({ sql: deps.sql, logger, retentionDays: config.retentionDays });

  return {
    async start() {
      worker.start();
      cleanup.start();
      await consumer.start();
    },
    async stop() {
      await consumer.stop();
      await worker.stop();
      await cleanup.stop();
    },
    isRunning: () => consumer.isRunning(),
    outcomes: () => ({ ...outcomes }),
    async endpointStates() {
      const rows = await deps.sql<{ state: EndpointState; n: number }[]>`
        SELECT CASE WHEN enabled AND failing_since IS NULL THEN 'active' WHEN enabled THEN 'failing'
                    WHEN disabled_cause = 'partner' THEN 'disabled_by_partner' WHEN disabled_cause = 'gone' THEN 'disabled_gone'
                    ELSE 'disabled_failing' END AS state, count(*)::int AS n
        FROM webhook_endpoints GROUP BY 1`;
      const states: Record<EndpointState, number> = { active: 0, failing: 0, disabled_by_partner: 0, disabled_gone: 0, disabled_failing: 0 };
      for (const r of rows) states[r.state] = r.n;
      return states;
    },
    worker,
  };
}
