// The webhooks service as a factory: the Kafka consumer that turns facts into deliveries, the worker that sends
// them, and the retention cleanup, wired from config and the clients main.ts (or a test) created.
import { Topics } from "@pss/contracts";
import {
  createEventConsumer,
  createSecretBox,
  type ConsumerMetrics,
  type Logger,
  type OutageBackoff,
  type OutageMetrics,
  type Resolver,
  type Tracing,
} from "@pss/service-kit";
import type { Kafka } from "@pss/service-kit";
import type postgres from "postgres";
import type { WebhooksConfig } from "./config.ts";
import { createDeliveryRepository } from "./delivery/delivery-repository.ts";
import { createDeliveryWorker, type DeliveryWorker } from "./delivery/delivery-worker.ts";
import type { AttemptOutcome } from "./delivery/outcome.ts";
import { createSender } from "./delivery/sender.ts";
import { createFactHandler } from "./fan-out/fact-handler.ts";
import { createReportTracker } from "./reports/report-tracker.ts";
import { createDeliveryCleanup } from "./retention/delivery-cleanup.ts";
import { readEndpointStates, type EndpointState } from "./endpoint-states.ts";
import type { WebhooksMetrics } from "./webhooks-metrics.ts";

/** What the service reads of its config: the clients are made in main.ts, but the group's session timing is its own. */
export type WebhooksServiceConfig = Omit<WebhooksConfig, "healthPort" | "logLevel" | "postgres" | "kafka"> & {
  kafka?: Pick<WebhooksConfig["kafka"], "consumer">;
};

export interface WebhooksServiceDeps {
  config: WebhooksServiceConfig;
  sql: postgres.Sql;
  kafka: Kafka;
  logger: Logger;
  resolve?: Resolver;
  /** Confine this instance to these partners (tests share Kafka and PostgreSQL). */
  onlyPartners?: ReadonlySet<string>;
  metrics?: { webhooks: WebhooksMetrics; consumer: ConsumerMetrics };
  /** Waits on our own dependencies (service-kit outage-wait.ts). */
  outageMetrics?: OutageMetrics;
  /** Between tries of PostgreSQL after a send (default 1 s doubling to 30 s); tests shorten it. */
  outageBackoff?: OutageBackoff;
  /** Spans of the events it handles (service-kit tracing.ts); absent: nothing recorded. */
  tracing?: Tracing;
}

export type { EndpointState };

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
  const outcomes: Record<AttemptOutcome, number> = {
    delivered: 0,
    retry_scheduled: 0,
    failed: 0,
    endpoint_gone: 0,
    endpoint_disabled: 0,
    discarded: 0,
    postponed: 0,
  };
  const worker = createDeliveryWorker({
    tracing: deps.tracing,
    repository: createDeliveryRepository(deps.sql, {
      disableAfterMs: config.disableAfterMs,
      endpointConcurrency: config.endpointConcurrency,
      partnerConcurrency: config.partnerConcurrency,
    }),
    sender: createSender({ timeoutMs: config.timeoutMs, allowedHosts: config.allowedHosts, resolve: deps.resolve }),
    secrets: createSecretBox(config.secretKey),
    logger,
    concurrency: config.concurrency,
    pollMs: config.pollMs,
    leaseMs: config.timeoutMs + config.claimMarginMs,
    retryScheduleMs: config.retryScheduleMs,
    partners: () => (deps.onlyPartners ? [...deps.onlyPartners] : null),
    outageMetrics: deps.outageMetrics,
    outageBackoff: deps.outageBackoff,
    onOutcome: (outcome, seconds) => {
      outcomes[outcome]++;
      deps.metrics?.webhooks.attempt(outcome, seconds);
    },
  });
  const consumer = createEventConsumer({
    kafka: deps.kafka,
    groupId: config.groupId,
    topics: [Topics.partnerEvents.name],
    deadLetterTopic: Topics.webhooksDeadLetter.name,
    logger,
    partitionsConsumedConcurrently: Topics.partnerEvents.partitions,
    session: deps.config.kafka?.consumer,
    metrics: deps.metrics?.consumer,
    tracing: deps.tracing,
    handle: createFactHandler({
      sql: deps.sql,
      logger,
      publicBaseUrl: config.publicBaseUrl,
      onDeliveriesCreated: () => worker.wake(),
      onlyPartners: deps.onlyPartners,
    }),
  });
  // listing.report.changed: its own group, so a slow recompute never delays deliveries, and a dead letter of its
  // own kind never mixes with undeliverable facts (both go to the webhooks dead-letter topic, told apart by group).
  const reportTracker = createReportTracker({ sql: deps.sql, logger, onlyPartners: deps.onlyPartners });
  const reportConsumer = createEventConsumer({
    kafka: deps.kafka,
    groupId: config.reportGroupId,
    topics: [Topics.listingEvents.name, Topics.brokerEvents.name, Topics.partnerEvents.name],
    deadLetterTopic: Topics.webhooksDeadLetter.name,
    logger: logger.child({ component: "report-tracker" }),
    partitionsConsumedConcurrently: Topics.partnerEvents.partitions,
    session: deps.config.kafka?.consumer,
    metrics: deps.metrics?.consumer,
    tracing: deps.tracing,
    handle: reportTracker.handle,
  });
  const cleanup = createDeliveryCleanup({ sql: deps.sql, logger, retentionDays: config.retentionDays });

  return {
    async start() {
      worker.start();
      cleanup.start();
      reportTracker.start();
      await Promise.all([consumer.start(), reportConsumer.start()]);
    },
    async stop() {
      // Side by side: leaving the consumer group can wait on a rebalance (a member that died is evicted only after
      // the session timeout), and that must not keep the attempts in flight from finishing and being recorded.
      // Facts consumed meanwhile are already deliveries in PostgreSQL: the next start sends them.
      await Promise.all([
        consumer.stop(),
        reportConsumer.stop().then(() => reportTracker.stop()),
        worker.stop().then(() => cleanup.stop()),
      ]);
    },
    isRunning: () => consumer.isRunning() && reportConsumer.isRunning(),
    outcomes: () => ({ ...outcomes }),
    endpointStates: () => readEndpointStates(deps.sql, deps.onlyPartners ? [...deps.onlyPartners] : undefined),
    worker,
  };
}
