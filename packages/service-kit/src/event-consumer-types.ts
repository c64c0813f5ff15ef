// What handlers and services see of an event consumer (event-consumer.ts): options, the per-message context and
// the one error that means "never".
import type { Kafka } from "./kafka-client.ts";
import type { AnyEventEnvelope } from "@pss/contracts";
import type { ConsumerSettings } from "./config.ts";
import type { ConsumerMetrics } from "./consumer-metrics.ts";
import type { Logger } from "./logger.ts";
import type { EventTrace } from "./trace.ts";
import type { Tracing } from "./tracing.ts";

export class PermanentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PermanentError";
  }
}

export interface MessageContext {
  topic: string;
  partition: number;
  offset: string;
  /**
   * The request ID the message carries and the traceparent of its consumer span: an event or delivery produced
   * because of this one carries them on (for a single message they are also the active context's).
   */
  trace: EventTrace;
  /** Log every line about this record here: each carries requestId, traceparent, eventId, event type, aggregate and position. */
  log: Logger;
}

/** What a handler may say it did with an event; "skipped": nothing to do (stale version, another partner's). */
export type HandleOutcome = "handled" | "skipped";

export interface EventConsumerOptions {
  kafka: Kafka;
  groupId: string;
  topics: string[];
  deadLetterTopic: string;
  logger: Logger;
  /** Handle one event; throw PermanentError for "never", anything else for "retry". */
  handle?: (event: AnyEventEnvelope, ctx: MessageContext) => Promise<void | HandleOutcome>;
  /**
   * Handle the events of one partition batch at once (bulk work). Return the events that failed permanently;
   * throw to retry the whole batch.
   */
  handleBatch?: (
    events: { event: AnyEventEnvelope; ctx: MessageContext }[],
  ) => Promise<{ event: AnyEventEnvelope; reason: string }[]>;
  partitionsConsumedConcurrently?: number;
  /** Session timeout, heartbeat interval and rebalance timeout (KAFKA_SESSION_TIMEOUT_MS …). */
  session?: ConsumerSettings;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Records outcomes, handler latency, lag and dead letters of this group (consumer-metrics.ts). */
  metrics?: ConsumerMetrics;
  /** A consumer span per message (tracing.ts); absent: spans get IDs for the logs, nothing is recorded. */
  tracing?: Tracing;
}

export interface EventConsumer {
  start(): Promise<void>;
  /** Stops fetching, lets the in-flight message or batch finish (or abandons its retries), commits, disconnects. */
  stop(): Promise<void>;
  isRunning(): boolean;
}
