// A Kafka consumer group with one explicit poison-pill policy, shared by every worker:
// - a message that can never succeed (not JSON, not an envelope, or the handler throws PermanentError) goes to
//   the dead-letter topic with the reason in headers, and the partition moves on;
// - any other failure is retried with exponential backoff and jitter, without committing, until it succeeds
//   or the process stops (then it is redelivered to whoever takes the partition);
// - handlers must be idempotent: delivery is at least once;
// - envelopes are read tolerantly: unknown fields are ignored (a newer producer may add some), the fields
//   consumers use are checked; handlers check the payload fields they use the same way;
// - every message gets one "event handled" log line (outcome, duration), and handlers log everything about
//   the record through ctx.log, whose lines carry the request ID and traceparent the message came with
//   (Kafka headers, see trace.ts), so `grep <requestId>` finds a write's whole journey;
// - a handler may run longer than the session timeout (a listing with 50 photos, a slow SMTP server, retries
//   through an outage): heartbeats go on while it works, so the group never takes its partitions away for
//   being busy. Instances of one group share the partitions; one that dies (even SIGKILL) stops
//   heartbeating, and after the session timeout its partitions, with their uncommitted messages, go to the others.
import { Value } from "@sinclair/typebox/value";
import { Partitioners, type Consumer, type IHeaders, type Kafka, type KafkaMessage, type Producer } from "kafkajs";
import { AnyEventEnvelope, registerFormats } from "@pss/contracts";
import { DEFAULT_CONSUMER_SETTINGS, type ConsumerSettings } from "./config.ts";
import type { ConsumerMetrics } from "./consumer-metrics.ts";
import type { Logger } from "./logger.ts";
import { REPLAYED_FROM_HEADER } from "./dead-letters.ts";
import { traceFromHeaders, type EventTrace } from "./trace.ts";

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
  /** The request ID and traceparent the message carries; an event produced because of this one passes them on (consequenceTrace). */
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
  handleBatch?: (events: { event: AnyEventEnvelope; ctx: MessageContext }[]) => Promise<{ event: AnyEventEnvelope; reason: string }[]>;
  partitionsConsumedConcurrently?: number;
  /** Session timeout, heartbeat interval and rebalance timeout (KAFKA_SESSION_TIMEOUT_MS …). */
  session?: ConsumerSettings;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Records outcomes, handler latency, lag and dead letters of this group (consumer-metrics.ts). */
  metrics?: ConsumerMetrics;
}

export interface EventConsumer {
  start(): Promise<void>;
  /** Stops fetching, lets the in-flight message or batch finish (or abandons its retries), commits, disconnects. */
  stop(): Promise<void>;
  isRunning(): boolean;
}

type Parsed = { ok: true; event: AnyEventEnvelope } | { ok: false; reason: string };

export function parseEnvelope(value: Buffer | null): Parsed {
  if (!value) return { ok: false, reason: "empty message" };
  let json: unknown;
  try {
    json = JSON.parse(value.toString("utf8"));
  } catch {
    return { ok: false, reason: "not JSON" };
  }
  // The envelope's uuid and date-time formats must not depend on some other module (Elysia) being imported.
  registerFormats();
  if (!Value.Check(AnyEventEnvelope, json)) {
    const first = [...Value.Errors(AnyEventEnvelope, json)][0];
    return { ok: false, reason: `not an event envelope: ${first ? `${first.path || "/"} ${first.message}` : "invalid"}` };
  }
  return { ok: true, event: json };
}

/** The log fields of one message: its trace, its position and, when it is an envelope, the event. */
export function messageLogFields(position: { topic: string; partition: number; offset: string }, trace: EventTrace, event?: AnyEventEnvelope): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  if (trace.requestId) fields.requestId = trace.requestId;
  if (trace.traceparent) fields.traceparent = trace.traceparent;
  if (event) Object.assign(fields, { eventId: event.eventId, eventType: event.type, aggregateType: event.aggregateType, aggregateId: event.aggregateId, version: event.version });
  return Object.assign(fields, position);
}

const elapsedMs = (since: number) => Math.round((performance.now() - since) * 10) / 10;

export function createEventConsumer(opts: EventConsumerOptions): EventConsumer {
  if (!opts.handle === !opts.handleBatch) throw new Error("give exactly one of handle or handleBatch");
  const log = opts.logger.child({ component: "event-consumer", groupId: opts.groupId });
  const initialBackoff = opts.initialBackoffMs ?? 200;
  const maxBackoff = opts.maxBackoffMs ?? 30_000;
  const session = opts.session ?? DEFAULT_CONSUMER_SETTINGS;
  let consumer: Consumer | null = null;
  let producer: Producer | null = null;
  let stopping = false;
  let running = false;
  let unwatch: (() => Promise<void>) | null = null;
  const metrics = opts.metrics;

  class Stopping extends Error {}

  /** One handler call, timed; `messages` failed attempts are counted as retried when it throws for a retry. */
  async function attempt<T>(topic: string, messages: number, fn: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof PermanentError) && !stopping) metrics?.count(opts.groupId, topic, "retried", messages);
      throw err;
    } finally {
      metrics?.observeHandler(opts.groupId, topic, (performance.now() - started) / 1000);
    }
  }

  async function retrying<T>(what: string, fn: () => Promise<T>, logger: Logger = log): Promise<T> {
    let delay = initialBackoff;
    for (let attempt = 1; ; attempt++) {
      if (stopping) throw new Stopping("stopping");
      try {
        return await fn();
      } catch (err) {
        if (err instanceof PermanentError) throw err;
        if (stopping) throw new Stopping("stopping");
        logger.warn("handler failed; retrying", { component: "event-consumer", what, attempt, retryInMs: delay, err: (err as Error).message });
        await Bun.sleep(delay * (0.8 + Math.random() * 0.4));
        delay = Math.min(delay * 2, maxBackoff);
      }
    }
  }

  /** The context of one message: its position, its trace (headers) and a logger carrying both and the event. */
  function contextOf(topic: string, partition: number, message: KafkaMessage, event?: AnyEventEnvelope): MessageContext {
    const trace = traceFromHeaders(message.headers);
    const position = { topic, partition, offset: message.offset };
    const fields = messageLogFields(position, trace, event);
    // A replayed dead letter says where it was replayed from (admin CLI `dlq replay`).
    const replayedFrom = message.headers?.[REPLAYED_FROM_HEADER];
    if (replayedFrom !== undefined) fields.replayedFrom = String(Array.isArray(replayedFrom) ? replayedFrom[0] : replayedFrom);
    // From the service's logger (its component stays), not this consumer's: handlers log through it.
    return { ...position, trace, log: opts.logger.child({ groupId: opts.groupId, ...fields }) };
  }

  function logHandled(ctx: MessageContext, outcome: HandleOutcome | "dead-lettered", began: number, extra?: Record<string, unknown>): void {
    if (ctx.log.enabled("info")) ctx.log.info("event handled", { component: "event-consumer", outcome, durationMs: elapsedMs(began), ...extra });
  }

  async function deadLetter(message: KafkaMessage, ctx: MessageContext, reason: string, began: number): Promise<void> {
    const headers: IHeaders = {
      ...message.headers,
      "x-dead-letter-reason": reason.slice(0, 1000),
      "x-original-topic": ctx.topic,
      "x-original-partition": String(ctx.partition),
      "x-original-offset": ctx.offset,
      "x-consumer-group": opts.groupId,
      "x-failed-at": new Date().toISOString(),
    };
    // The original headers (request ID, traceparent) stay on the dead letter, and a replay sends them again.
    const [sent] = await retrying("dead-letter", () => producer!.send({ topic: opts.deadLetterTopic, acks: -1, messages: [{ key: message.key, value: message.value, headers }] }), ctx.log);
    // Where it landed: what `dlq show --offset` takes.
    ctx.log.error("message sent to dead-letter topic", { component: "event-consumer", reason, deadLetterTopic: opts.deadLetterTopic, deadLetterPartition: sent?.partition, deadLetterOffset: sent?.baseOffset });
    metrics?.count(opts.groupId, ctx.topic, "dead_lettered");
    logHandled(ctx, "dead-lettered", began, { reason });
  }

  /**
   * Runs `work` while heartbeating every interval. kafkajs heartbeats only between messages and batches, so
   * without this a handler longer than the session timeout would get its member removed mid-work. A heartbeat
   * refused because the group is rebalancing is ignored here: kafkajs sees it again after the handler and rejoins.
   */
  async function whileBeating<T>(heartbeat: () => Promise<void>, work: () => Promise<T>): Promise<T> {
    const timer = setInterval(() => {
      heartbeat().catch((err) => log.debug("heartbeat during work refused", { err: (err as Error).message }));
    }, session.heartbeatIntervalMs);
    try {
      return await work();
    } finally {
      clearInterval(timer);
    }
  }

  let starting: Promise<void> | null = null;

  async function startOnce(): Promise<void> {
    stopping = false;
    try {
      producer = opts.kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
      await producer.connect();
      consumer = opts.kafka.consumer({
        groupId: opts.groupId,
        allowAutoTopicCreation: false,
        sessionTimeout: session.sessionTimeoutMs,
        heartbeatInterval: session.heartbeatIntervalMs,
        rebalanceTimeout: session.rebalanceTimeoutMs,
      });
      await consumer.connect();
      await consumer.subscribe({ topics: opts.topics, fromBeginning: true });
    } catch (err) {
      // Kafka down at boot: leave nothing half-connected, so the caller can simply call start() again.
      await consumer?.disconnect().catch(() => {});
      await producer?.disconnect().catch(() => {});
      consumer = producer = null;
      throw err;
    }
    running = true;
    unwatch ??= metrics?.watch({ kafka: opts.kafka, groupId: opts.groupId, topics: opts.topics, deadLetterTopic: opts.deadLetterTopic }) ?? null;
    const crashed = consumer;
    // Which partitions this instance owns after each rebalance: what operators look at when scaling out or in.
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      const assigned = Object.fromEntries(Object.entries(e.payload.memberAssignment).map(([topic, partitions]) => [topic, [...partitions].sort((a, b) => a - b)]));
      log.info("partitions assigned", { memberId: e.payload.memberId, assigned });
    });
    consumer.on(consumer.events.CRASH, (e) => {
      log.error("consumer crashed", { err: String(e.payload.error), restart: e.payload.restart });
      // kafkajs restarts only after retriable errors; otherwise the consumer is gone while the process lives on.
      if (!e.payload.restart && !stopping && consumer === crashed) void restartAfterCrash();
    });
    if (opts.handle) {
      const handle = opts.handle;
      await consumer.run({
        partitionsConsumedConcurrently: opts.partitionsConsumedConcurrently ?? 1,
        eachMessage: async ({ topic, partition, message, heartbeat }) => {
          const began = performance.now();
          const parsed = parseEnvelope(message.value);
          if (!parsed.ok) return deadLetter(message, contextOf(topic, partition, message), parsed.reason, began);
          const ctx = contextOf(topic, partition, message, parsed.event);
          let outcome: void | HandleOutcome;
          try {
            outcome = await whileBeating(heartbeat, () =>
              retrying(`${topic}/${partition}@${message.offset}`, () => attempt(topic, 1, () => handle(parsed.event, ctx)), ctx.log),
            );
            metrics?.count(opts.groupId, topic, "handled");
          } catch (err) {
            if (err instanceof PermanentError) return deadLetter(message, ctx, err.message, began);
            throw err; // Stopping: leave uncommitted for redelivery.
          }
          logHandled(ctx, outcome ?? "handled", began);
        },
      });
    } else {
      const handleBatch = opts.handleBatch!;
      await consumer.run({
        partitionsConsumedConcurrently: opts.partitionsConsumedConcurrently ?? 1,
        eachBatchAutoResolve: false,
        eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale }) => {
          const began = performance.now();
          const valid: { event: AnyEventEnvelope; ctx: MessageContext; message: KafkaMessage }[] = [];
          for (const message of batch.messages) {
            const parsed = parseEnvelope(message.value);
            if (parsed.ok) valid.push({ event: parsed.event, ctx: contextOf(batch.topic, batch.partition, message, parsed.event), message });
            else await deadLetter(message, contextOf(batch.topic, batch.partition, message), parsed.reason, began);
          }
          if (valid.length > 0) {
            const failed = await whileBeating(heartbeat, () =>
              retrying(`${batch.topic}/${batch.partition} batch of ${valid.length}`, () =>
                attempt(batch.topic, valid.length, () => handleBatch(valid.map(({ event, ctx }) => ({ event, ctx })))),
              ),
            );
            const failedEvents = new Set<AnyEventEnvelope>();
            for (const f of failed) {
              const item = valid.find((v) => v.event === f.event);
              if (item && !failedEvents.has(item.event)) {
                failedEvents.add(item.event);
                await deadLetter(item.message, item.ctx, f.reason, began);
              }
            }
            metrics?.count(opts.groupId, batch.topic, "handled", valid.length - failedEvents.size);
            for (const item of valid) if (!failedEvents.has(item.event)) logHandled(item.ctx, "handled", began, { batchSize: valid.length });
          }
          if (!isRunning() || isStale()) return;
          resolveOffset(batch.lastOffset());
          await commitOffsetsIfNecessary();
        },
      });
    }
  }

  async function restartAfterCrash(): Promise<void> {
    running = false;
    await consumer?.disconnect().catch(() => {});
    await producer?.disconnect().catch(() => {});
    consumer = producer = null;
    let delay = initialBackoff;
    while (!stopping && !running) {
      await Bun.sleep(delay * (0.8 + Math.random() * 0.4));
      if (stopping) return;
      try {
        await startOnce();
        log.info("consumer restarted after a crash");
      } catch (err) {
        log.warn("consumer restart failed; retrying", { retryInMs: delay, err: (err as Error).message });
        delay = Math.min(delay * 2, maxBackoff);
      }
    }
  }

  return {
    start() {
      // A retried boot may call start again while (or after) this consumer started: one start at a time.
      if (running) return Promise.resolve();
      starting ??= startOnce().finally(() => {
        starting = null;
      });
      return starting;
    },
    async stop() {
      stopping = true;
      if (consumer) await consumer.disconnect().catch((err) => log.warn("consumer disconnect failed", { err: (err as Error).message }));
      if (producer) await producer.disconnect().catch(() => {});
      consumer = null;
      producer = null;
      running = false;
      await unwatch?.();
      unwatch = null;
    },
    isRunning: () => running && !stopping,
  };
}
