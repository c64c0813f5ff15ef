// What every consumer group does, recorded by event-consumer.ts for all consumers alike:
// - kafka_consumer_messages_total{group,topic,outcome}: handled, retried (a failed attempt that will be tried
//   again), dead_lettered;
// - kafka_consumer_handler_duration_seconds{group,topic}: one observation per handler call (a message, or a
//   partition batch for batch consumers), successful or not;
// - kafka_consumer_lag_messages{group,topic,partition}: the partition's end offset minus the group's committed
//   offset, read from Kafka when Prometheus scrapes (cached; a group that never committed counts from the
//   partition's start, where it will begin). It is what the group has yet to process, and it grows while a
//   consumer is stuck, which a figure kept inside the consumer would not show;
// - kafka_dead_letter_messages{topic}: messages held in the group's dead-letter topic (end minus start offset
//   per partition, summed): durable across restarts, unlike the counter.
import type { Admin, Kafka } from "./kafka-client.ts";
import { Counter, Gauge, Histogram } from "prom-client";
import type { Logger } from "./logger.ts";
import { LATENCY_BUCKETS_SECONDS, type Metrics, type ScrapeSource } from "./metrics.ts";

export type ConsumerOutcome = "handled" | "retried" | "dead_lettered";

export interface ConsumerMetrics {
  count(group: string, topic: string, outcome: ConsumerOutcome, n?: number): void;
  observeHandler(group: string, topic: string, seconds: number): void;
  /** Reports the group's lag and its dead-letter topic's size at scrape time until the returned stop is called. */
  watch(opts: { kafka: Kafka; groupId: string; topics: string[]; deadLetterTopic: string }): () => Promise<void>;
}

export interface ConsumerPosition {
  lag: { topic: string; partition: number; lag: number }[];
  deadLetters: number;
}

/** Lag per partition from the group's committed offsets and the partitions' end offsets. */
export function lagOf(
  committed: { partition: number; offset: string }[],
  ends: { partition: number; high: string; low: string }[],
): { partition: number; lag: number }[] {
  const done = new Map(committed.map((c) => [c.partition, Number(c.offset)]));
  return ends.map((e) => {
    const high = Number(e.high);
    const at = done.get(e.partition);
    // -1: nothing committed yet; the group starts at the partition's first retained message.
    const from = at === undefined || at < 0 ? Number(e.low) : at;
    return { partition: e.partition, lag: Math.max(0, high - from) };
  });
}

export function createConsumerMetrics(
  metrics: Metrics,
  opts: {
    lagMaxAgeMs?: number;
    lagTimeoutMs?: number;
    /** Where a failed lag read goes; by default a debug line on `logger` (a scrape must not fail on it). */
    onError?: (err: unknown) => void;
    logger?: Logger;
  } = {},
): ConsumerMetrics {
  const { logger } = opts;
  const onError =
    opts.onError ??
    (logger && ((err: unknown) => logger.debug("consumer metrics unavailable", { err: (err as Error).message })));
  const registers = [metrics.registry];
  const messages = new Counter({
    name: "kafka_consumer_messages_total",
    help: "Messages a consumer group finished with, by outcome: handled, retried (a failed attempt tried again), dead_lettered",
    labelNames: ["group", "topic", "outcome"],
    registers,
  });
  const handler = new Histogram({
    name: "kafka_consumer_handler_duration_seconds",
    help: "Duration of one handler call: a message, or a partition batch for batch consumers",
    labelNames: ["group", "topic"],
    buckets: LATENCY_BUCKETS_SECONDS,
    registers,
  });
  const watched = new Map<string, { source: ScrapeSource<ConsumerPosition>; deadLetterTopic: string }>();
  new Gauge({
    name: "kafka_consumer_lag_messages",
    help: "Messages in a partition not yet processed and committed by the consumer group (end offset minus committed offset)",
    labelNames: ["group", "topic", "partition"],
    registers,
    async collect() {
      this.reset();
      await Promise.all(
        [...watched].map(async ([group, w]) => {
          const position = await w.source.read();
          for (const p of position?.lag ?? [])
            this.set({ group, topic: p.topic, partition: String(p.partition) }, p.lag);
        }),
      );
    },
  });
  new Gauge({
    name: "kafka_dead_letter_messages",
    help: "Messages held in a dead-letter topic (retained ones, all partitions)",
    labelNames: ["topic"],
    registers,
    async collect() {
      this.reset();
      for (const w of watched.values()) {
        const position = await w.source.read();
        if (position) this.set({ topic: w.deadLetterTopic }, position.deadLetters);
      }
    },
  });

  return {
    count: (group, topic, outcome, n = 1) => {
      if (n > 0) messages.inc({ group, topic, outcome }, n);
    },
    observeHandler: (group, topic, seconds) => handler.observe({ group, topic }, seconds),
    watch({ kafka, groupId, topics, deadLetterTopic }) {
      let admin: Admin | null = null;
      let closed = false;
      const load = async (): Promise<ConsumerPosition> => {
        if (closed) throw new Error("consumer stopped");
        try {
          if (!admin) {
            admin = kafka.admin({ retry: { retries: 0 } });
            await admin.connect();
          }
          const committed = await admin.fetchOffsets({ groupId, topics });
          const lag: ConsumerPosition["lag"] = [];
          for (const topic of topics) {
            const ends = await admin.fetchTopicOffsets(topic);
            const done = committed.find((c) => c.topic === topic)?.partitions ?? [];
            for (const p of lagOf(done, ends)) lag.push({ topic, ...p });
          }
          const dead = await admin.fetchTopicOffsets(deadLetterTopic);
          return { lag, deadLetters: dead.reduce((sum, p) => sum + Math.max(0, Number(p.high) - Number(p.low)), 0) };
        } catch (err) {
          // A broken connection is opened again on the next scrape.
          await admin?.disconnect().catch(() => {});
          admin = null;
          throw err;
        }
      };
      const source = metrics.source(`kafka-consumer:${groupId}`, load, {
        maxAgeMs: opts.lagMaxAgeMs ?? 5_000,
        timeoutMs: opts.lagTimeoutMs ?? 2_000,
        onError,
      });
      watched.set(groupId, { source, deadLetterTopic });
      return async () => {
        closed = true;
        source.close?.();
        watched.delete(groupId);
        await admin?.disconnect().catch(() => {});
        admin = null;
      };
    },
  };
}
