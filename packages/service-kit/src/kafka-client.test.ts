// The producer behaviour the outbox relay relies on, in kafkajs's own send loop (patched: patches/kafkajs@2.2.4.patch)
// with plain fakes of the cluster and brokers: a partition whose request failed is sent again to its leader after
// a leader change, also when that leader already answered for other partitions. Unpatched, kafkajs skipped it and
// resolved the send as written: the events were lost (seen in the rolling-restart run of
// test/secured/secured-servers.test.ts; docs/operations.md, "Kafka client behaviour under broker faults").
import { expect, test } from "bun:test";
import { createRequire } from "node:module";

const require = createRequire(import.meta.resolve("kafkajs"));
const createSendMessages = require("./src/producer/sendMessages.js") as (
  deps: unknown,
) => (req: unknown) => Promise<{ topicName: string; partition: number }[]>;
const createRetry = require("./src/retry/index.js") as (opts: unknown) => unknown;
const { KafkaJSConnectionError } = require("./src/errors.js") as {
  KafkaJSConnectionError: new (message: string) => Error;
};

interface Produced {
  broker: number;
  partitions: { partition: number; keys: string[] }[];
}

test("a partition whose leader moved to a broker that already answered is sent again, not dropped", async () => {
  // Partition 0 on broker 1, partition 1 on broker 2; broker 2 fails once (it is stopping), and then partition 1
  // is led by broker 1, which answered for partition 0 in the first attempt.
  let leaders: Record<number, number> = { 0: 1, 1: 2 };
  const produced: Produced[] = [];
  let broker2Failures = 1;
  const broker = (nodeId: number) => ({
    nodeId,
    async produce({
      topicData,
    }: {
      topicData: { topic: string; partitions: { partition: number; messages: { key: string }[] }[] }[];
    }) {
      if (nodeId === 2 && broker2Failures-- > 0) throw new KafkaJSConnectionError("Connection error: read ECONNRESET");
      const partitions = topicData[0]!.partitions.map((p) => ({
        partition: p.partition,
        keys: p.messages.map((m) => m.key),
      }));
      produced.push({ broker: nodeId, partitions });
      return {
        topics: [
          {
            topicName: topicData[0]!.topic,
            partitions: partitions.map((p) => ({ partition: p.partition, errorCode: 0, baseOffset: "0" })),
          },
        ],
      };
    },
  });
  const brokers = new Map([1, 2].map((id) => [id, broker(id)]));
  const cluster = {
    targetTopics: new Set<string>(),
    async refreshMetadataIfNecessary() {},
    async refreshMetadata() {
      leaders = { 0: 1, 1: 1 };
    },
    async addMultipleTargetTopics() {},
    isConnected: () => true,
    removeBroker() {},
    findTopicPartitionMetadata: () => [0, 1].map((partitionId) => ({ partitionId, leader: leaders[partitionId] })),
    findLeaderForPartitions(_topic: string, partitions: string[]) {
      const byLeader: Record<string, number[]> = {};
      for (const p of partitions.map(Number)) (byLeader[leaders[p]!] ??= []).push(p);
      return byLeader;
    },
    findBroker: async ({ nodeId }: { nodeId: string }) => brokers.get(Number(nodeId)),
  };
  const sequences = new Map<string, number>();
  const eosManager = {
    acquireBrokerLock: async () => {},
    releaseBrokerLock: async () => {},
    isTransactional: () => false,
    getProducerId: () => 7,
    getProducerEpoch: () => 0,
    getSequence: (topic: string, partition: number) => sequences.get(`${topic}/${partition}`) ?? 0,
    updateSequence(topic: string, partition: number, increment: number) {
      sequences.set(`${topic}/${partition}`, (sequences.get(`${topic}/${partition}`) ?? 0) + increment);
    },
  };
  const logger = { debug() {}, error() {}, warn() {}, info() {} };
  const send = createSendMessages({
    logger,
    cluster,
    eosManager,
    partitioner: ({ message }: { message: { key: string } }) => Number(message.key.slice(-1)),
    retrier: createRetry({ retries: 3, initialRetryTime: 1, maxRetryTime: 5 }),
  });

  const result = await send({
    acks: -1,
    timeout: 1000,
    topicMessages: [{ topic: "events", messages: [{ key: "a-0" }, { key: "b-1" }] }],
  });

  // Partition 1's message reached broker 1 on the retry; both partitions are in the answer, each once.
  expect(produced).toEqual([
    { broker: 1, partitions: [{ partition: 0, keys: ["a-0"] }] },
    { broker: 1, partitions: [{ partition: 1, keys: ["b-1"] }] },
  ]);
  expect(result.map((r) => `${r.topicName}/${r.partition}`).sort()).toEqual(["events/0", "events/1"]);
  // The failed request's sequence numbers were given back; each partition advanced by what it wrote.
  expect(Object.fromEntries(sequences)).toEqual({ "events/0": 1, "events/1": 1 });
});
