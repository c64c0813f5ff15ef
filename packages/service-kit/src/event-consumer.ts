// A Kafka consumer group with one explicit poison-pill policy, shared by every worker:
// - a message that can never succeed (not JSON, not an envelope, or the handler throws PermanentError) goes to
//   the dead-letter topic with the reason in headers, and the partition moves on;
// - any other failure is retried with exponential backoff and jitter, without committing, until it succeeds
//   or the process stops (then it is redelivered to whoever takes the partition);
// - handlers must be idempotent: delivery is at least once;
// - envelopes are read tolerantly: unknown fields are ignored (a newer producer may add some), the fields
//   consumers use are checked; handlers check the payload fields they use the same way;
// - a handler may run longer than the session timeout (a listing with 50 photos, a slow SMTP server, retries
//   through an outage): heartbeats go on while it works, so the group never takes its partitions away for
//   being busy. Instances of one group share the partitions; one that dies (even SIGKILL) stops
//   heartbeating, and after the session timeout its partitions, with their uncommitted messages, go to the others.
import { Value } from "@sinclair/typebox/value";
import { Partitioners, type Consumer, type IHeaders, type Kafka, type KafkaMessage, type Producer } from "kafkajs";
import { AnyEventEnvelope, registerFormats } from "@pss/contracts";
import { DEFAULT_CONSUMER_SETTINGS, type ConsumerSettings } from "./config.ts";
import type { Logger } from "./logger.ts";

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
}

export interface EventConsumerOptions {
  kafka: Kafka;
  groupId: string;
  topics: string[];
  deadLetterTopic: string;
  logger: Logger;
  /** Handle one event; throw PermanentError for "never", anything else for "retry". */
  handle?: (event: AnyEventEnvelope, ctx: MessageContext) => Promise<void>;
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

  class Stopping extends Error {}

  async function retrying<T>(what: string, fn: () => Promise<T>): Promise<T> {
    let delay = initialBackoff;
    for (let attempt = 1; ; attempt++) {
      if (stopping) throw new Stopping("stopping");
      try {
        return await fn();
      } catch (err) {
        if (err instanceof PermanentError) throw err;
        if (stopping) throw new Stopping("stopping");
        log.warn("handler failed; retrying", { what, attempt, retryInMs: delay, err: (err as Error).message });
        await Bun.sleep(delay * (0.8 + Math.random() * 0.4));
        delay = Math.min(delay * 2, maxBackoff);
      }
    }
  }

  async function deadLetter(message: KafkaMessage, ctx: MessageContext, reason: string): Promise<void> {
    const headers: IHeaders = {
      ...message.headers,
      "x-dead-letter-reason": reason.slice(0, 1000),
      "x-original-topic": ctx.topic,
      "x-original-partition": String(ctx.partition),
      "x-original-offset": ctx.offset,
      "x-consumer-group": opts.groupId,
      "x-failed-at": new Date().toISOString(),
    };
    await retrying("dead-letter", () => producer!.send({ topic: opts.deadLetterTopic, acks: -1, messages: [{ key: message.key, value: message.value, headers }] }));
    log.error("message sent to dead-letter topic", { ...ctx, reason, deadLetterTopic: opts.deadLetterTopic });
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
          const ctx = { topic, partition, offset: message.offset };
          const parsed = parseEnvelope(message.value);
          if (!parsed.ok) return deadLetter(message, ctx, parsed.reason);
          try {
            await whileBeating(heartbeat, () => retrying(`${topic}/${partition}@${message.offset}`, () => handle(parsed.event, ctx)));
          } catch (err) {
            if (err instanceof PermanentError) return deadLetter(message, ctx, err.message);
            throw err; // Stopping: leave uncommitted for redelivery.
          }
        },
      });
    } else {
      const handleBatch = opts.handleBatch!;
      await consumer.run({
        partitionsConsumedConcurrently: opts.partitionsConsumedConcurrently ?? 1,
        eachBatchAutoResolve: false,
        eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale }) => {
          const valid: { event: AnyEventEnvelope; ctx: MessageContext; message: KafkaMessage }[] = [];
          for (const message of batch.messages) {
            const ctx = { topic: batch.topic, partition: batch.partition, offset: message.offset };
            const parsed = parseEnvelope(message.value);
            if (parsed.ok) valid.push({ event: parsed.event, ctx, message });
            else await deadLetter(message, ctx, parsed.reason);
          }
          if (valid.length > 0) {
            const failed = await whileBeating(heartbeat, () =>
              retrying(`${batch.topic}/${batch.partition} batch of ${valid.length}`, () => handleBatch(valid.map(({ event, ctx }) => ({ event, ctx })))),
            );
            for (const f of failed) {
              const item = valid.find((v) => v.event === f.event);
              if (item) await deadLetter(item.message, item.ctx, f.reason);
            }
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
    },
    isRunning: () => running && !stopping,
  };
}
