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
import { createEventProducer, type Consumer, type Producer } from "./kafka-client.ts";
import { DEFAULT_CONSUMER_SETTINGS } from "./config.ts";
import { PermanentError, type EventConsumer, type EventConsumerOptions } from "./event-consumer-types.ts";
import { createMessagePipeline, type Handled, type PipelineItem } from "./message-pipeline.ts";
import { disabledTracing } from "./tracing.ts";

export * from "./event-consumer-types.ts";
export { messageLogFields, parseEnvelope } from "./event-envelope.ts";

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
  const pipeline = createMessagePipeline(opts, {
    log,
    heartbeatIntervalMs: session.heartbeatIntervalMs,
    isStopping: () => stopping,
    producer: () => producer!,
    tracing: opts.tracing ?? disabledTracing(opts.groupId),
  });

  /** Both handler forms as one: the events that failed for good, and a single event's outcome. */
  const handleItems = async (items: PipelineItem[]): Promise<Handled> => {
    if (opts.handleBatch) return { failed: await opts.handleBatch(items.map(({ event, ctx }) => ({ event, ctx }))) };
    const [{ event, ctx }] = items as [PipelineItem];
    try {
      return { failed: [], outcome: await opts.handle!(event, ctx) };
    } catch (err) {
      if (err instanceof PermanentError) return { failed: [{ event, reason: err.message }] };
      throw err;
    }
  };

  let starting: Promise<void> | null = null;

  async function startOnce(): Promise<void> {
    stopping = false;
    try {
      producer = createEventProducer(opts.kafka);
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
    unwatch ??=
      metrics?.watch({
        kafka: opts.kafka,
        groupId: opts.groupId,
        topics: opts.topics,
        deadLetterTopic: opts.deadLetterTopic,
      }) ?? null;
    const crashed = consumer;
    // Which partitions this instance owns after each rebalance: what operators look at when scaling out or in.
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      const assigned = Object.fromEntries(
        Object.entries(e.payload.memberAssignment).map(([topic, partitions]) => [
          topic,
          [...partitions].sort((a, b) => a - b),
        ]),
      );
      log.info("partitions assigned", { memberId: e.payload.memberId, assigned });
    });
    consumer.on(consumer.events.CRASH, (e) => {
      log.error("consumer crashed", { err: String(e.payload.error), restart: e.payload.restart });
      // kafkajs restarts only after retriable errors; otherwise the consumer is gone while the process lives on.
      if (!e.payload.restart && !stopping && consumer === crashed) void restartAfterCrash();
    });
    const partitionsConsumedConcurrently = opts.partitionsConsumedConcurrently ?? 1;
    // A Stopping error leaves the message or batch uncommitted, for redelivery.
    if (opts.handle) {
      await consumer.run({
        partitionsConsumedConcurrently,
        eachMessage: ({ topic, partition, message, heartbeat }) =>
          pipeline.run(topic, partition, [message], heartbeat, handleItems),
      });
    } else {
      await consumer.run({
        partitionsConsumedConcurrently,
        eachBatchAutoResolve: false,
        eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale }) => {
          await pipeline.run(batch.topic, batch.partition, batch.messages, heartbeat, handleItems);
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
      if (consumer)
        await consumer
          .disconnect()
          .catch((err) => log.warn("consumer disconnect failed", { err: (err as Error).message }));
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
