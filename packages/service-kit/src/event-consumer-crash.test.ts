// Pure logic with a plain fake of the Kafka client: what the consumer does when kafkajs gives up on it.
import { expect, test } from "bun:test";
import type { Kafka } from "kafkajs";
import { createEventConsumer } from "./event-consumer.ts";
import { silentLogger } from "./logger.ts";

function fakeKafka() {
  const consumers: { crash: (payload: { error: Error; restart: boolean }) => void; disconnected: boolean }[] = [];
  const kafka = {
    producer: () => ({ connect: async () => {}, disconnect: async () => {}, send: async () => {} }),
    consumer: () => {
      const c = { crash: (_: { error: Error; restart: boolean }) => {}, disconnected: false };
      consumers.push(c);
      return {
        events: { CRASH: "consumer.crash" },
        connect: async () => {},
        subscribe: async () => {},
        run: async () => {},
        disconnect: async () => void (c.disconnected = true),
        on: (_event: string, listener: (e: { payload: { error: Error; restart: boolean } }) => void) => {
          c.crash = (payload) => listener({ payload });
        },
      };
    },
  };
  return { kafka: kafka as unknown as Kafka, consumers };
}

test("a consumer kafkajs will not restart (non-retriable crash) is started again by itself", async () => {
  const { kafka, consumers } = fakeKafka();
  const consumer = createEventConsumer({
    kafka,
    groupId: "g",
    topics: ["t"],
    deadLetterTopic: "dlq",
    logger: silentLogger,
    handle: async () => {},
    initialBackoffMs: 10,
  });
  await consumer.start();
  expect(consumers).toHaveLength(1);
  consumers[0]!.crash({ error: new Error("not retriable"), restart: false });
  for (let i = 0; i < 100 && consumers.length < 2; i++) await Bun.sleep(10);
  expect(consumers).toHaveLength(2);
  expect(consumers[0]!.disconnected).toBe(true);
  for (let i = 0; i < 100 && !consumer.isRunning(); i++) await Bun.sleep(10);
  expect(consumer.isRunning()).toBe(true);
  await consumer.stop();
});

test("a crash kafkajs restarts itself leaves the consumer alone", async () => {
  const { kafka, consumers } = fakeKafka();
  const consumer = createEventConsumer({
    kafka,
    groupId: "g",
    topics: ["t"],
    deadLetterTopic: "dlq",
    logger: silentLogger,
    handle: async () => {},
    initialBackoffMs: 10,
  });
  await consumer.start();
  consumers[0]!.crash({ error: new Error("retriable"), restart: true });
  await Bun.sleep(100);
  expect(consumers).toHaveLength(1);
  expect(consumer.isRunning()).toBe(true);
  await consumer.stop();
});
