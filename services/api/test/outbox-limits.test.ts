// The relay against the real Kafka and PostgreSQL with rows Kafka's limits matter for. The rows go to topics
// made for this file, so no consumer of the real topics sees them; whichever relay is active (one per
// database) publishes them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Kafka, logLevel } from "kafkajs";
import postgres from "postgres";
import { uniqueName } from "../../../test/support/env.ts";
import { DEFAULT_MAX_BATCH_BYTES, RECORD_OVERHEAD_BYTES, traceHeaderBytes } from "../src/outbox/outbox-batching.ts";
import { readPendingRows } from "../src/outbox/outbox-relay.ts";
import { createOutboxStatus } from "../src/outbox/outbox-status.ts";
import { readTopicToEnd } from "./support/events.ts";
import { startApi, type ApiHarness } from "./support/harness.ts";

let api: ApiHarness;
const topics: string[] = [];

beforeAll(async () => {
  api = await startApi();
});
afterAll(async () => {
  // Rows that are still set aside would stay in every operator view of this shared database.
  if (topics.length > 0) await api.sql`DELETE FROM outbox WHERE topic = ANY(${topics})`;
  const admin = api.kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics }).catch(() => {});
  await admin.disconnect();
  await api.stop();
});

async function createTopic(opts: { partitions: number; maxMessageBytes?: number }): Promise<string> {
  const topic = uniqueName("pss-test.outbox-relay");
  const admin = api.kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        {
          topic,
          numPartitions: opts.partitions,
          replicationFactor: 1,
          configEntries: opts.maxMessageBytes
            ? [{ name: "max.message.bytes", value: String(opts.maxMessageBytes) }]
            : [],
        },
      ],
    });
  } finally {
    await admin.disconnect();
  }
  topics.push(topic);
  return topic;
}

/** Inserts one outbox row whose payload is an envelope-like object padded to about `bytes`. */
async function insertRow(topic: string, key: string, version: number, bytes: number): Promise<string> {
  const [row] = await api.sql`
    INSERT INTO outbox (topic, message_key, payload)
    VALUES (${topic}, ${key}, jsonb_build_object('aggregateId', ${key}::text, 'version', ${version}::int, 'pad', repeat('x', ${bytes}::int)))
    RETURNING id::text AS id`;
  return row!.id as string;
}

async function waitUntilNothingPending(topic: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] =
      await api.sql`SELECT count(*)::int AS n FROM outbox WHERE topic = ${topic} AND published_at IS NULL AND set_aside_at IS NULL`;
    if (row!.n === 0) return;
    if (Date.now() > deadline) throw new Error(`${row!.n} rows of ${topic} still pending after ${timeoutMs} ms`);
    await Bun.sleep(100);
  }
}

/** Every message on a topic made by this file: [key, version] in the order of each partition. */
async function messagesOn(topic: string): Promise<{ key: string; version: number }[]> {
  const kafka = new Kafka({
    clientId: uniqueName("outbox-reader"),
    brokers: process.env.KAFKA_BROKERS!.split(","),
    logLevel: logLevel.NOTHING,
  });
  const found: { key: string; version: number }[] = [];
  await readTopicToEnd(
    kafka,
    topic,
    (message) =>
      void found.push({ key: message.key!.toString(), version: JSON.parse(message.value!.toString()).version }),
  );
  return found;
}

const versionsOf = (messages: { key: string; version: number }[], key: string) =>
  messages.filter((m) => m.key === key).map((m) => m.version);

describe("outbox relay and Kafka's size limits", () => {
  test("a backlog of 200 rows of 100 KB drains in requests within the byte limit, in order per aggregate", async () => {
    const topic = await createTopic({ partitions: 3 });
    // Written in one statement, as a burst of large listings would be; four aggregates, 50 versions each.
    await api.sql`
      INSERT INTO outbox (topic, message_key, payload)
      SELECT ${topic}, 'agg-' || (i % 4), jsonb_build_object('aggregateId', 'agg-' || (i % 4), 'version', i / 4 + 1, 'pad', repeat(md5(i::text), 3125))
      FROM generate_series(0, 199) AS i ORDER BY i`;
    await waitUntilNothingPending(topic, 120_000);

    const [{ setAside }] =
      (await api.sql`SELECT count(*)::int AS "setAside" FROM outbox WHERE topic = ${topic} AND set_aside_at IS NOT NULL`) as unknown as [
        { setAside: number },
      ];
    expect(setAside).toBe(0);
    // Rows published by one request share its published_at: no request carried more than the limit.
    const requests = await api.sql<{ bytes: number; rows: number }[]>`
      SELECT sum(octet_length(payload::text) + octet_length(message_key) + ${RECORD_OVERHEAD_BYTES}::int)::int AS bytes, count(*)::int AS rows
      FROM outbox WHERE topic = ${topic} GROUP BY published_at`;
    expect(requests.reduce((n, r) => n + r.rows, 0)).toBe(200);
    expect(Math.max(...requests.map((r) => r.bytes))).toBeLessThanOrEqual(DEFAULT_MAX_BATCH_BYTES);
    expect(requests.length).toBeGreaterThanOrEqual(40);

    const messages = await messagesOn(topic);
    expect(messages.length).toBe(200);
    const fifty = Array.from({ length: 50 }, (_, i) => i + 1);
    for (const key of ["agg-0", "agg-1", "agg-2", "agg-3"])
      expect({ key, versions: versionsOf(messages, key) }).toEqual({ key, versions: fifty });
  }, 180_000);

  test("rows Kafka can never take are set aside with their reason; the rows after them are published", async () => {
    // A topic that refuses messages over 20 KB, as a topic with a smaller max.message.bytes would.
    const topic = await createTopic({ partitions: 1, maxMessageBytes: 20_000 });
    const refusedByKafka = { key: uniqueName("a"), ids: [] as string[] };
    refusedByKafka.ids.push(await insertRow(topic, refusedByKafka.key, 1, 1_000));
    refusedByKafka.ids.push(await insertRow(topic, refusedByKafka.key, 2, 50_000)); // over the topic's limit
    refusedByKafka.ids.push(await insertRow(topic, refusedByKafka.key, 3, 1_000));
    const tooLargeToTry = { key: uniqueName("b"), ids: [] as string[] };
    tooLargeToTry.ids.push(await insertRow(topic, tooLargeToTry.key, 1, 1_200_000)); // over the relay's 1 MB
    tooLargeToTry.ids.push(await insertRow(topic, tooLargeToTry.key, 2, 1_000));
    const other = uniqueName("c");
    await insertRow(topic, other, 1, 1_000);
    await waitUntilNothingPending(topic, 60_000);

    const rows = await api.sql<{ id: string; published: boolean; reason: string | null }[]>`
      SELECT id::text AS id, published_at IS NOT NULL AS published, set_aside_reason AS reason FROM outbox WHERE topic = ${topic} ORDER BY id`;
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(refusedByKafka.ids[1]!)).toMatchObject({
      published: false,
      reason: expect.stringContaining("MESSAGE_TOO_LARGE"),
    });
    expect(byId.get(tooLargeToTry.ids[0]!)).toMatchObject({
      published: false,
      reason: expect.stringContaining("OUTBOX_MAX_MESSAGE_BYTES"),
    });
    expect(rows.filter((r) => r.published).length).toBe(4);

    const messages = await messagesOn(topic);
    expect(versionsOf(messages, refusedByKafka.key)).toEqual([1, 3]);
    expect(versionsOf(messages, tooLargeToTry.key)).toEqual([2]);
    expect(versionsOf(messages, other)).toEqual([1]);

    // Operators see them without Kafka, with what identifies the event.
    const status = createOutboxStatus({ sql: api.sql });
    expect((await status.backlog()).setAside).toBeGreaterThanOrEqual(2);
    const listed = (await status.listSetAside(10_000)).filter((r) => r.topic === topic);
    expect(listed.map((r): unknown[] => [r.id, r.messageKey, r.version])).toEqual([
      [refusedByKafka.ids[1], refusedByKafka.key, 2],
      [tooLargeToTry.ids[0], tooLargeToTry.key, 1],
    ]);
    expect(listed[1]!.bytes).toBeGreaterThan(1_200_000);

    // Once the topic takes larger messages, a re-queued row is published (after its aggregate's newer version,
    // which consumers then skip as stale).
    const admin = api.kafka.admin();
    await admin.connect();
    await admin.alterConfigs({
      validateOnly: false,
      resources: [
        { type: 2 /* TOPIC */, name: topic, configEntries: [{ name: "max.message.bytes", value: "200000" }] },
      ],
    });
    await admin.disconnect();
    expect(await status.requeue([refusedByKafka.ids[1]!, "not-an-id"])).toBe(1);
    await waitUntilNothingPending(topic, 60_000);
    const [requeued] =
      await api.sql`SELECT published_at IS NOT NULL AS published FROM outbox WHERE id = ${refusedByKafka.ids[1]!}`;
    expect(requeued!.published).toBe(true);
    expect(versionsOf(await messagesOn(topic), refusedByKafka.key)).toEqual([1, 3, 2]);
  }, 180_000);

  test("the relay reads pending rows in numeric id order across digit lengths, and stops at the byte limit", async () => {
    // A private session with a temporary table that shadows the shared outbox, so the ids can be chosen.
    const sql = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    try {
      await sql.begin(async (tx) => {
        await tx`CREATE TEMP TABLE outbox (LIKE public.outbox INCLUDING ALL) ON COMMIT DROP`;
        await tx`
          INSERT INTO outbox (id, topic, message_key, payload, published_at, set_aside_at) VALUES
            (7, 't', 'k', '{"n":0}', now(), NULL), (8, 't', 'k', '{"n":0}', NULL, now()),
            (998, 't', 'k', '{"n":1}', NULL, NULL), (1000, 't', 'k', '{"n":3}', NULL, NULL), (999, 't', 'k', '{"n":2}', NULL, NULL),
            (10000, 't', 'k', ${tx.json({ pad: "x".repeat(2_000) })}, NULL, NULL), (10001, 't', 'k', '{"n":5}', NULL, NULL)`;
        const small = 1 + '{"n": 1}'.length + RECORD_OVERHEAD_BYTES;
        const rows = await readPendingRows(tx, { batchSize: 500, maxBatchBytes: 1_000 });
        expect(rows.map((r) => [r.id, r.bytes])).toEqual([
          ["998", small],
          ["999", small],
          ["1000", small],
        ]);
        expect(rows[0]!.considered).toBe(5);
        // An oversized row at the head comes alone, whatever the byte limit.
        await tx`UPDATE outbox SET published_at = now() WHERE id < 10000`;
        expect((await readPendingRows(tx, { batchSize: 500, maxBatchBytes: 1_000 })).map((r) => r.id)).toEqual([
          "10000",
        ]);
        expect(
          (await readPendingRows(tx, { batchSize: 1, maxBatchBytes: 100_000 })).map((r) => [r.id, r.considered]),
        ).toEqual([["10000", 1]]);
      });
    } finally {
      await sql.end();
    }
  });

  test("a row's bytes count the trace headers the relay sends with it, as traceHeaderBytes says", async () => {
    const sql = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    try {
      await sql.begin(async (tx) => {
        await tx`CREATE TEMP TABLE outbox (LIKE public.outbox INCLUDING ALL) ON COMMIT DROP`;
        const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        await tx`
          INSERT INTO outbox (id, topic, message_key, payload, request_id, traceparent) VALUES
            (1, 't', 'k', '{"n": 1}', NULL, NULL), (2, 't', 'k', '{"n": 1}', 'req-é', ${traceparent}), (3, 't', 'k', '{"n": 1}', 'req-only', NULL)`;
        const base = 1 + '{"n": 1}'.length + RECORD_OVERHEAD_BYTES;
        const rows = await readPendingRows(tx, { batchSize: 500, maxBatchBytes: 100_000 });
        expect(rows.map((r) => [r.id, r.request_id, r.traceparent, r.bytes])).toEqual([
          ["1", null, null, base],
          ["2", "req-é", traceparent, base + traceHeaderBytes({ request_id: "req-é", traceparent })],
          ["3", "req-only", null, base + traceHeaderBytes({ request_id: "req-only", traceparent: null })],
        ]);
        expect(rows[1]!.bytes - base).toBeGreaterThan(Buffer.byteLength("req-é") + traceparent.length);
      });
    } finally {
      await sql.end();
    }
  });

  test("backlog counts rows waiting and their age apart from rows set aside", async () => {
    const status = createOutboxStatus({ sql: api.sql });
    const before = await status.backlog();
    expect(before.pending).toBeGreaterThanOrEqual(0);
    expect(before.oldestPendingAgeMs).toBeGreaterThanOrEqual(0);
    // A row inserted with an old timestamp and set aside at once: counted as set aside, never as pending.
    const topic = await createTopic({ partitions: 1 });
    const [row] = await api.sql`
      INSERT INTO outbox (topic, message_key, payload, created_at, set_aside_at, set_aside_reason)
      VALUES (${topic}, 'k', '{"version":1}', now() - interval '1 hour', now(), 'test: set aside')
      RETURNING id::text AS id`;
    const after = await status.backlog();
    expect(after.setAside).toBe(before.setAside + 1);
    expect(after.oldestPendingAgeMs).toBeLessThan(3600_000);
    expect((await status.listSetAside(10_000)).find((r) => r.id === row!.id)).toMatchObject({
      reason: "test: set aside",
      version: 1,
      eventType: null,
    });
  });
});
