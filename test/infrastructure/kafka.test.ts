import { afterAll, expect, test } from "bun:test";
import { Kafka, logLevel } from "kafkajs";
import { testUrls, uniqueName } from "../support/env.ts";

const kafka = new Kafka({
  clientId: "plumbing-test",
  brokers: testUrls().KAFKA_BROKERS.split(","),
  logLevel: logLevel.NOTHING,
});
const admin = kafka.admin();
const producer = kafka.producer({ idempotent: true });
const consumer = kafka.consumer({ groupId: uniqueName("plumbing-group") });
afterAll(async () => {
  await Promise.allSettled([consumer.disconnect(), producer.disconnect(), admin.disconnect()]);
});

test("Kafka: a created topic carries a produced message to a consumer group, in order per key", async () => {
  const topic = uniqueName("plumbing-topic");
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true });
  const meta = await admin.fetchTopicMetadata({ topics: [topic] });
  expect(meta.topics[0]!.partitions).toHaveLength(3);

  await producer.connect();
  await producer.send({ topic, messages: ["1", "2", "3"].map((v) => ({ key: "aggregate-1", value: v })) });

  const received: string[] = [];
  const { promise: allReceived, resolve } = Promise.withResolvers<void>();
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      received.push(message.value!.toString());
      if (received.length === 3) resolve();
    },
  });
  await Promise.race([allReceived, Bun.sleep(30_000)]);
  expect(received).toEqual(["1", "2", "3"]);
}, 60_000);
