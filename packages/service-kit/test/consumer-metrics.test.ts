// The event consumer's metrics against the real Kafka: outcomes, handler latency, lag per partition while a
// handler is stuck, and the dead-letter topic's size.
import { afterAll, expect, test } from "bun:test";
import { Kafka, logLevel } from "kafkajs";
import {
  createConsumerMetrics,
  createEventConsumer,
  createMetrics,
  ensureTopics,
  PermanentError,
  silentLogger,
  type EventConsumer,
} from "../src/index.ts";
import { testUrls, uniqueName } from "../../../test/support/env.ts";
import { parsePrometheusText, valueOf } from "../../../test/support/prometheus-text.ts";

const kafka = new Kafka({
  clientId: "consumer-metrics-test",
  brokers: testUrls().KAFKA_BROKERS.split(","),
  logLevel: logLevel.NOTHING,
});
const producer = kafka.producer();
await producer.connect();
const running: EventConsumer[] = [];
afterAll(async () => {
  await Promise.all(running.map((c) => c.stop()));
  await producer.disconnect();
});

const envelope = (aggregateId: string, version: number, payload: unknown = {}) =>
  JSON.stringify({
    eventId: crypto.randomUUID(),
    type: "test.happened",
    aggregateType: "listing",
    aggregateId,
    version,
    partnerId: "p",
    occurredAt: new Date().toISOString(),
    payload,
  });

async function until<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await check();
    if (result) return result;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await Bun.sleep(100);
  }
}

test("a consumer group's outcomes, handler latency, lag per partition and dead letters are on /metrics", async () => {
  const main = uniqueName("metrics-consumer-test");
  const dlq = `${main}.dlq`;
  await ensureTopics(kafka, [
    { name: main, partitions: 2 },
    { name: dlq, partitions: 1 },
  ]);
  const metrics = createMetrics({ service: "test", defaultMetrics: false });
  const consumerMetrics = createConsumerMetrics(metrics, { lagMaxAgeMs: 0 });
  const group = uniqueName("metrics-group");
  const gate = Promise.withResolvers<void>();
  let failedOnce = false;
  const handled: string[] = [];
  const consumer = createEventConsumer({
    kafka,
    groupId: group,
    topics: [main],
    deadLetterTopic: dlq,
    logger: silentLogger,
    metrics: consumerMetrics,
    initialBackoffMs: 20,
    // The held partition must not stop the other one.
    partitionsConsumedConcurrently: 2,
    handle: async (event) => {
      const payload = event.payload as { bad?: boolean; flaky?: boolean; hold?: boolean };
      if (payload.bad) throw new PermanentError("payload is unusable");
      if (payload.flaky && !failedOnce) {
        failedOnce = true;
        throw new Error("database busy");
      }
      if (payload.hold) await gate.promise;
      handled.push(event.aggregateId);
    },
  });
  running.push(consumer);
  afterAll(() => gate.resolve());
  await consumer.start();
  const scrape = async () => parsePrometheusText(await metrics.render());

  // Partition 0: a poison message, an unusable event, a flaky one, a good one. Partition 1: one that holds.
  await producer.send({
    topic: main,
    messages: [
      { partition: 0, key: "a", value: "{not json" },
      { partition: 0, key: "a", value: envelope("a", 1, { bad: true }) },
      { partition: 0, key: "a", value: envelope("a", 2, { flaky: true }) },
      { partition: 0, key: "a", value: envelope("a", 3) },
      { partition: 1, key: "b", value: envelope("b", 1, { hold: true }) },
    ],
  });
  await until("partition 0 handled", () => handled.filter((id) => id === "a").length === 2);

  // The held message is not committed: partition 1 lags by one until the handler returns.
  const whileHeld = await until("lag on partition 1", async () => {
    const s = await scrape();
    return valueOf(s, "kafka_consumer_lag_messages", { group, topic: main, partition: "1" }) === 1 ? s : undefined;
  });
  expect(valueOf(whileHeld, "kafka_consumer_messages_total", { group, topic: main, outcome: "dead_lettered" })).toBe(2);
  expect(valueOf(whileHeld, "kafka_consumer_messages_total", { group, topic: main, outcome: "retried" })).toBe(1);
  expect(valueOf(whileHeld, "kafka_consumer_messages_total", { group, topic: main, outcome: "handled" })).toBe(2);
  expect(valueOf(whileHeld, "kafka_dead_letter_messages", { topic: dlq })).toBe(2);
  expect(valueOf(whileHeld, "metrics_source_up", { source: `kafka-consumer:${group}` })).toBe(1);

  gate.resolve();
  await until(
    "lag back to zero",
    async () => valueOf(await scrape(), "kafka_consumer_lag_messages", { group, topic: main }) === 0,
  );
  // Counters are read at the start of a scrape, lag at its end: the next scrape has the handled message.
  const after = await scrape();
  expect(valueOf(after, "kafka_consumer_messages_total", { group, topic: main, outcome: "handled" })).toBe(3);
  // Four handler calls ended (bad, flaky's two attempts, good) plus the held one: five observations.
  expect(valueOf(after, "kafka_consumer_handler_duration_seconds_count", { group, topic: main })).toBe(5);

  await consumer.stop();
  expect(valueOf(await scrape(), "kafka_consumer_lag_messages", { group })).toBeUndefined();
}, 90_000);
