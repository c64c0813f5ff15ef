import { afterAll, expect, test } from "bun:test";
import { Kafka, logLevel } from "kafkajs";
import { Topics, topicSpecs } from "@pss/contracts";
import {
  createEventConsumer,
  createLogger,
  ensureTopics,
  PermanentError,
  silentLogger,
  type EventConsumer,
} from "../src/index.ts";
import { testUrls, uniqueName } from "../../../test/support/env.ts";

const kafka = new Kafka({
  clientId: "event-consumer-test",
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

async function topics() {
  const main = uniqueName("consumer-test");
  const dlq = `${main}.dlq`;
  await ensureTopics(kafka, [
    { name: main, partitions: 2 },
    { name: dlq, partitions: 1 },
  ]);
  return { main, dlq };
}

async function until(check: () => boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await Bun.sleep(50);
  }
}

async function readDeadLetters(topic: string, count: number) {
  const consumer = kafka.consumer({ groupId: uniqueName("dlq-reader") });
  const out: { value: string; reason: string; offset: string }[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      out.push({
        value: message.value!.toString(),
        reason: message.headers!["x-dead-letter-reason"]!.toString(),
        offset: message.headers!["x-original-offset"]!.toString(),
      });
    },
  });
  await until(() => out.length >= count);
  await consumer.disconnect();
  return out;
}

test("poison messages go to the dead-letter topic with a reason, and the partition keeps moving", async () => {
  const { main, dlq } = await topics();
  const handled: number[] = [];
  const consumer = createEventConsumer({
    kafka,
    groupId: uniqueName("g"),
    topics: [main],
    deadLetterTopic: dlq,
    logger: silentLogger,
    handle: async (event) => {
      if ((event.payload as { bad?: boolean }).bad) throw new PermanentError("payload is unusable");
      handled.push(event.version);
    },
  });
  running.push(consumer);
  await consumer.start();
  await producer.send({
    topic: main,
    messages: [
      { key: "a", value: "{not json" },
      { key: "a", value: JSON.stringify({ hello: "world" }) },
      { key: "a", value: envelope("a", 1, { bad: true }) },
      { key: "a", value: envelope("a", 2) },
    ],
  });
  await until(() => handled.includes(2));
  const dead = await readDeadLetters(dlq, 3);
  expect(dead.map((d) => d.reason)).toEqual([
    "not JSON",
    expect.stringContaining("not an event envelope"),
    "payload is unusable",
  ]);
  expect(dead[0]!.value).toBe("{not json");
  expect(handled).toEqual([2]);
}, 60_000);

test("a transient failure is retried until it succeeds, and committed offsets are not redelivered", async () => {
  const { main, dlq } = await topics();
  const groupId = uniqueName("g");
  let failures = 0;
  const seen: number[] = [];
  const first = createEventConsumer({
    kafka,
    groupId,
    topics: [main],
    deadLetterTopic: dlq,
    logger: silentLogger,
    initialBackoffMs: 20,
    handle: async (event) => {
      if (event.version === 1 && failures < 3) {
        failures++;
        throw new Error("database briefly unavailable");
      }
      seen.push(event.version);
    },
  });
  await first.start();
  await producer.send({ topic: main, messages: [1, 2, 3].map((v) => ({ key: "k", value: envelope("k", v) })) });
  await until(() => seen.length === 3);
  expect(failures).toBe(3);
  expect(seen).toEqual([1, 2, 3]);
  await first.stop();

  const redelivered: number[] = [];
  const second = createEventConsumer({
    kafka,
    groupId,
    topics: [main],
    deadLetterTopic: dlq,
    logger: silentLogger,
    handle: async (e) => void redelivered.push(e.version),
  });
  running.push(second);
  await second.start();
  await producer.send({ topic: main, messages: [{ key: "k", value: envelope("k", 4) }] });
  await until(() => redelivered.includes(4));
  expect(redelivered).toEqual([4]);
}, 60_000);

test("stopping during endless retries returns promptly and leaves the message for the next consumer", async () => {
  const { main, dlq } = await topics();
  const groupId = uniqueName("g");
  let attempts = 0;
  const stuck = createEventConsumer({
    kafka,
    groupId,
    topics: [main],
    deadLetterTopic: dlq,
    logger: silentLogger,
    initialBackoffMs: 20,
    maxBackoffMs: 50,
    handle: async () => {
      attempts++;
      throw new Error("always failing");
    },
  });
  await stuck.start();
  await producer.send({ topic: main, messages: [{ key: "k", value: envelope("k", 1) }] });
  await until(() => attempts >= 2);
  const began = Date.now();
  await stuck.stop();
  expect(Date.now() - began).toBeLessThan(10_000);

  const got: number[] = [];
  const next = createEventConsumer({
    kafka,
    groupId,
    topics: [main],
    deadLetterTopic: dlq,
    logger: silentLogger,
    handle: async (e) => void got.push(e.version),
  });
  running.push(next);
  await next.start();
  await until(() => got.length === 1);
  expect(got).toEqual([1]);
}, 60_000);

test("batch handlers get whole batches; events they report as failed go to the dead-letter topic", async () => {
  const { main, dlq } = await topics();
  const batches: number[][] = [];
  const consumer = createEventConsumer({
    kafka,
    groupId: uniqueName("g"),
    topics: [main],
    deadLetterTopic: dlq,
    logger: silentLogger,
    handleBatch: async (items) => {
      batches.push(items.map((i) => i.event.version));
      return items
        .filter((i) => i.event.version === 2)
        .map((i) => ({ event: i.event, reason: "version two is cursed" }));
    },
  });
  running.push(consumer);
  await producer.send({ topic: main, messages: [1, 2, 3].map((v) => ({ key: "same", value: envelope("same", v) })) });
  await consumer.start();
  await until(() => batches.flat().length === 3);
  expect(batches.flat()).toEqual([1, 2, 3]);
  const dead = await readDeadLetters(dlq, 1);
  expect(dead[0]!.reason).toBe("version two is cursed");
}, 60_000);

test("a handler busy for twice the session timeout keeps its partitions: no rebalance, each message handled once", async () => {
  const { main, dlq } = await topics();
  const lines: { msg: string }[] = [];
  const logger = createLogger({ service: "test", level: "debug", write: (line) => lines.push(JSON.parse(line)) });
  const handled: number[] = [];
  const consumer = createEventConsumer({
    kafka,
    groupId: uniqueName("g-slow"),
    topics: [main],
    deadLetterTopic: dlq,
    logger,
    // Kafka's smallest session timeout; kafkajs alone would heartbeat only after the 13 s handler.
    session: { sessionTimeoutMs: 6_000, heartbeatIntervalMs: 1_000, rebalanceTimeoutMs: 10_000 },
    handle: async (event) => {
      if (event.version === 1) await Bun.sleep(13_000);
      handled.push(event.version);
    },
  });
  running.push(consumer);
  await consumer.start();
  await until(() => lines.some((l) => l.msg === "partitions assigned"));
  await producer.send({
    topic: main,
    messages: [
      { key: "a", value: envelope("a", 1) },
      { key: "a", value: envelope("a", 2) },
    ],
  });
  await until(() => handled.includes(2), 40_000);
  // One assignment at start; a member removed for silence would have rejoined and been assigned again.
  expect(lines.filter((l) => l.msg === "partitions assigned")).toHaveLength(1);
  expect(handled).toEqual([1, 2]);
}, 60_000);

test("topic settings: event topics get the configured partitions, dead-letter topics one, all the replication factor", () => {
  const specs = topicSpecs({ partitions: 12, replicationFactor: 3 });
  expect(specs.find((t) => t.name === Topics.listingEvents.name)).toMatchObject({
    partitions: 12,
    replicationFactor: 3,
  });
  expect(specs.find((t) => t.name === Topics.mediaDeadLetter.name)).toMatchObject({
    partitions: 1,
    replicationFactor: 3,
  });
  expect(topicSpecs().find((t) => t.name === Topics.leadEvents.name)).toMatchObject({
    partitions: 6,
    replicationFactor: 1,
  });
});

test("ensureTopics grows a topic with fewer partitions than configured and never shrinks one", async () => {
  const name = uniqueName("grow-test");
  await ensureTopics(kafka, [{ name, partitions: 2 }]);
  const admin = kafka.admin();
  await admin.connect();
  const count = async () => (await admin.fetchTopicMetadata({ topics: [name] })).topics[0]!.partitions.length;
  try {
    expect(await count()).toBe(2);
    await ensureTopics(kafka, [{ name, partitions: 4 }]);
    expect(await count()).toBe(4);
    await ensureTopics(kafka, [{ name, partitions: 3 }]);
    expect(await count()).toBe(4);
  } finally {
    await admin.deleteTopics({ topics: [name] }).catch(() => {});
    await admin.disconnect();
  }
}, 60_000);

test("ensureTopics states the cluster's brokers and the copies asked for at boot, and names the mismatch when the cluster has fewer brokers than copies", async () => {
  const lines: { msg: string; brokers?: number; replicationFactor?: number }[] = [];
  const logger = createLogger({ service: "test", level: "info", write: (line) => lines.push(JSON.parse(line)) });
  const name = uniqueName("copies-test");
  // The test run's Kafka is one broker: three copies cannot be kept, and no topic is made.
  await expect(ensureTopics(kafka, [{ name, partitions: 1, replicationFactor: 3 }], logger)).rejects.toThrow(
    "KAFKA_REPLICATION_FACTOR=3 needs 3 brokers and the cluster has 1: add brokers, or set KAFKA_REPLICATION_FACTOR=1 (with NODE_ENV=production also KAFKA_REPLICATION_FACTOR_I_UNDERSTAND=true)",
  );
  expect(lines.find((l) => l.msg === "kafka cluster")).toMatchObject({ brokers: 1, replicationFactor: 3 });
  const admin = kafka.admin();
  await admin.connect();
  try {
    expect(await admin.listTopics()).not.toContain(name);
  } finally {
    await admin.disconnect();
  }
});
