// Everything the leads service runs, as one unit main.ts (and the integration tests) start and stop:
// - counter: consumer group that records every lead for counting (never waits for SMTP);
// - mailer: consumer group that makes each lead's first delivery attempt;
// - sweeper: retries deferred deliveries from the leads table.
// Without a mail transport (SMTP not configured) only the counter runs; leads wait as 'pending' and are sent
// by the sweeper once forwarding is configured.
import { eventMode, Topics, type AnyEventEnvelope } from "@pss/contracts";
import {
  createEventConsumer,
  type ConsumerMetrics,
  type ConsumerSettings,
  type EventConsumer,
  type Logger,
  type OutageBackoff,
  type OutageMetrics,
  type Tracing,
} from "@pss/service-kit";
import type { Kafka } from "@pss/service-kit";
import type postgres from "postgres";
import { createLeadCounter } from "./counting/lead-counter.ts";
import { parseLeadEvent } from "./counting/lead-event.ts";
import { createLeadForwarder, type DeliveryPolicy, type MailTransport } from "./forwarding/lead-forwarder.ts";
import { createRetrySweeper } from "./forwarding/retry-sweeper.ts";
import type { LeadsMetrics } from "./leads-metrics.ts";

export interface LeadsWorkersDeps {
  sql: postgres.Sql;
  kafka: Kafka;
  logger: Logger;
  groupPrefix: string;
  publicBaseUrl: string;
  mail: { transport: MailTransport; from: string; messageIdDomain: string } | null;
  policy: DeliveryPolicy;
  sweepIntervalMs: number;
  firstAttemptGraceMs: number;
  /** Group membership timing (KAFKA_SESSION_TIMEOUT_MS …). */
  session?: ConsumerSettings;
  /** Consumer retry backoff (a failing database); tests shorten it. */
  backoff?: { initialMs: number; maxMs: number };
  /** Only these partners' leads (tests sharing Kafka and PostgreSQL); absent = all. */
  partnerIds?: () => string[];
  /** Delivery outcomes (leads-metrics.ts) and the consumers' (service-kit consumer-metrics.ts). */
  metrics?: { leads: LeadsMetrics; consumer: ConsumerMetrics };
  /** Waits on our relay and PostgreSQL (service-kit outage-wait.ts). */
  outageMetrics?: OutageMetrics;
  /** Postponements while our relay is down, waits for PostgreSQL: default 1 s doubling to 30 s; tests shorten it. */
  outageBackoff?: OutageBackoff;
  /** Spans of the leads it counts and forwards (service-kit tracing.ts); absent: nothing recorded. */
  tracing?: Tracing;
}

export function createLeadsWorkers(deps: LeadsWorkersDeps) {
  const mine = (event: AnyEventEnvelope) => !deps.partnerIds || deps.partnerIds().includes(event.partnerId);
  const common = {
    kafka: deps.kafka,
    topics: [Topics.leadEvents.name],
    deadLetterTopic: Topics.leadsDeadLetter.name,
    logger: deps.logger,
    partitionsConsumedConcurrently: Topics.leadEvents.partitions,
    session: deps.session,
    initialBackoffMs: deps.backoff?.initialMs,
    maxBackoffMs: deps.backoff?.maxMs,
    metrics: deps.metrics?.consumer,
    tracing: deps.tracing,
  };
  const count = createLeadCounter({ sql: deps.sql, logger: deps.logger });
  const counter = createEventConsumer({
    ...common,
    groupId: `${deps.groupPrefix}-counter`,
    handleBatch: (items) => count(items.filter((i) => mine(i.event))),
  });

  const consumers: EventConsumer[] = [counter];
  let sweeper: ReturnType<typeof createRetrySweeper> | null = null;
  if (deps.mail) {
    const forwarding = createLeadForwarder({
      sql: deps.sql,
      logger: deps.logger,
      publicBaseUrl: deps.publicBaseUrl,
      policy: deps.policy,
      outageMetrics: deps.outageMetrics,
      outageBackoff: deps.outageBackoff,
      ...deps.mail,
    });
    // Every attempt, first (consumer) or later (sweeper), is counted by its outcome.
    const forwarder: typeof forwarding = {
      waitingForDatabase: forwarding.waitingForDatabase,
      async forward(leadId, log) {
        // The caller's logger passes through: the forwarding lines carry the intake request's ID.
        const outcome = await forwarding.forward(leadId, log);
        deps.metrics?.leads.attempt(outcome);
        return outcome;
      },
    };
    consumers.push(
      createEventConsumer({
        ...common,
        groupId: `${deps.groupPrefix}-mailer`,
        // Malformed events are dead-lettered by the counter; here they are only skipped. Test-mode leads are never
        // e-mailed (and stored as 'skipped', which the forwarder's claim never takes anyway).
        handle: async (event, ctx) => {
          const parsed = parseLeadEvent(event);
          if (parsed.ok !== true || !mine(event) || eventMode(event) !== "live") return "skipped";
          // ctx.log: the forwarding lines carry the intake request's ID and traceparent.
          return (await forwarder.forward(parsed.lead.leadId, ctx.log)) === "skipped" ? "skipped" : "handled";
        },
      }),
    );
    sweeper = createRetrySweeper({
      sql: deps.sql,
      forwarder,
      logger: deps.logger,
      policy: deps.policy,
      intervalMs: deps.sweepIntervalMs,
      firstAttemptGraceMs: deps.firstAttemptGraceMs,
      partnerIds: deps.partnerIds,
    });
  }

  return {
    async start() {
      await Promise.all(consumers.map((c) => c.start()));
      sweeper?.start();
    },
    /** Stops intake, lets in-flight leads finish, commits offsets. */
    async stop() {
      await Promise.all([...consumers.map((c) => c.stop()), sweeper?.stop()]);
    },
    isRunning: () => consumers.every((c) => c.isRunning()),
  };
}
