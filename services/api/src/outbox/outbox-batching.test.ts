import { describe, expect, test } from "bun:test";
import { KafkaJSError, KafkaJSNonRetriableError, KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError } from "kafkajs";
import { createRequire } from "node:module";
import {
  permanentKafkaFailure,
  planBatch,
  publishIsolatingRefusals,
  RECORD_OVERHEAD_BYTES,
  traceHeaderBytes,
  type OutboxRow,
} from "./outbox-batching.ts";

// What kafkajs' retriers throw: new KafkaJSNonRetriableError(e, { cause: e.cause || e }) (its types omit the options).
const nonRetriable = (e: Error, cause: Error = e) =>
  new (KafkaJSNonRetriableError as unknown as new (e: Error, o: { cause: Error }) => Error)(e, { cause });
const row = (id: number, bytes: number): OutboxRow => ({
  id: String(id),
  topic: "t",
  message_key: "k",
  payload: "",
  request_id: null,
  traceparent: null,
  bytes,
});
const ids = (rows: OutboxRow[]) => rows.map((r) => Number(r.id));

describe("planBatch bounds a request by bytes as well as rows", () => {
  const limits = { maxBatchBytes: 1_000, maxMessageBytes: 5_000 };

  test("takes rows in order until the next one would pass the byte limit", () => {
    const plan = planBatch([row(1, 400), row(2, 400), row(3, 400), row(4, 100)], limits);
    expect(ids(plan.send)).toEqual([1, 2]);
    expect(plan.cut).toBe(true);
    expect(plan.tooLarge).toEqual([]);
  });

  test("a row over the batch limit but within the message limit goes alone", () => {
    expect(ids(planBatch([row(1, 3_000), row(2, 10)], limits).send)).toEqual([1]);
    expect(ids(planBatch([row(1, 10), row(2, 3_000)], limits).send)).toEqual([1]);
  });

  test("rows over the message limit are set aside and do not stop the rows after them", () => {
    const plan = planBatch([row(1, 100), row(2, 6_000), row(3, 100)], limits);
    expect(ids(plan.send)).toEqual([1, 3]);
    expect(ids(plan.tooLarge)).toEqual([2]);
    expect(plan.cut).toBe(false);
  });

  test("200 rows of 100 KB under the default limits go out in requests of at most 512 KiB", () => {
    let rows = Array.from({ length: 200 }, (_, i) => row(i + 1, 100_000));
    const sizes: number[] = [];
    while (rows.length > 0) {
      const plan = planBatch(rows, { maxBatchBytes: 512 * 1024, maxMessageBytes: 1_000_000 });
      sizes.push(plan.send.reduce((n, r) => n + r.bytes, 0));
      rows = rows.slice(plan.send.length);
    }
    expect(sizes.length).toBe(40);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(512 * 1024);
  });
});

describe("permanentKafkaFailure tells refusals no retry can fix from transient errors", () => {
  const protocol = (type: string, retriable: boolean) =>
    new KafkaJSProtocolError({ type, message: `broker says ${type}`, retriable } as never);

  test("a message too large, wrapped the way the producer throws it, is permanent for the rows sent", () => {
    // Both of kafkajs' retriers wrap it: new KafkaJSNonRetriableError(e, { cause: e.cause || e }).
    const refused = protocol("MESSAGE_TOO_LARGE", false);
    const err = nonRetriable(nonRetriable(refused), refused);
    expect(permanentKafkaFailure(err)).toEqual({
      reason: "MESSAGE_TOO_LARGE: broker says MESSAGE_TOO_LARGE",
      scope: "rows",
    });
    expect(permanentKafkaFailure(protocol("INVALID_RECORD", false))?.scope).toBe("rows");
  });

  test("topic authorization is permanent for the whole topic", () => {
    expect(permanentKafkaFailure(nonRetriable(protocol("TOPIC_AUTHORIZATION_FAILED", false)))?.scope).toBe("topic");
  });

  test("connection loss, a missing topic, exhausted retries and unknown errors are transient", () => {
    expect(permanentKafkaFailure(new KafkaJSError("Connection error: ECONNREFUSED"))).toBeNull();
    expect(permanentKafkaFailure(protocol("UNKNOWN_TOPIC_OR_PARTITION", true))).toBeNull();
    expect(
      permanentKafkaFailure(
        new KafkaJSNumberOfRetriesExceeded(protocol("NOT_LEADER_FOR_PARTITION", true), {
          retryCount: 5,
          retryTime: 100,
        } as never),
      ),
    ).toBeNull();
    expect(permanentKafkaFailure(new Error("boom"))).toBeNull();
    expect(permanentKafkaFailure(null)).toBeNull();
  });
});

describe("publishIsolatingRefusals finds the rows Kafka refuses and publishes the rest in order", () => {
  const refused = (type: string) =>
    nonRetriable(new KafkaJSProtocolError({ type, message: type, retriable: false } as never));
  const onTopic = (id: number, topic: string): OutboxRow => ({ ...row(id, 10), topic });

  /** A fake producer: refuses a request that contains any row `refuses` says no to (as Kafka refuses a batch). */
  function fakeKafka(refuses: (r: OutboxRow) => Error | null) {
    const log = { requests: 0, sent: [] as number[], setAside: [] as [number[], string][] };
    const steps = {
      async send(rows: OutboxRow[]) {
        log.requests++;
        const error = rows.map(refuses).find((e) => e);
        if (error) throw error;
      },
      async markSent(rows: OutboxRow[]) {
        log.sent.push(...ids(rows));
      },
      async setAside(rows: OutboxRow[], reason: string) {
        log.setAside.push([ids(rows), reason]);
      },
    };
    return { log, steps };
  }

  test("one refused row among many is set aside alone; every other row is sent once marked, in id order", async () => {
    const rows = Array.from({ length: 100 }, (_, i) => row(i + 1, 10));
    const { log, steps } = fakeKafka((r) => (r.id === "37" ? refused("MESSAGE_TOO_LARGE") : null));
    await publishIsolatingRefusals(rows, steps);
    expect(log.setAside).toEqual([[[37], "MESSAGE_TOO_LARGE: MESSAGE_TOO_LARGE"]]);
    expect(log.sent).toEqual(ids(rows).filter((id) => id !== 37));
    expect(log.requests).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(100)) + 1);
  });

  test("a refused topic sets aside that topic's rows and nothing else", async () => {
    const rows = [onTopic(1, "a"), onTopic(2, "denied"), onTopic(3, "a"), onTopic(4, "denied"), onTopic(5, "a")];
    const { log, steps } = fakeKafka((r) => (r.topic === "denied" ? refused("TOPIC_AUTHORIZATION_FAILED") : null));
    await publishIsolatingRefusals(rows, steps);
    expect(log.setAside.flatMap(([set]) => set)).toEqual([2, 4]);
    expect(log.sent).toEqual([1, 3, 5]);
  });

  test("rows that fit one by one but not all together are all sent, none set aside", async () => {
    const rows = Array.from({ length: 8 }, (_, i) => row(i + 1, 10));
    const { log, steps } = fakeKafka(() => null);
    const send = steps.send;
    steps.send = async (batch) => (batch.length > 2 ? Promise.reject(refused("MESSAGE_TOO_LARGE")) : send(batch));
    await publishIsolatingRefusals(rows, steps);
    expect(log.setAside).toEqual([]);
    expect(log.sent).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  test("a transient error is thrown with nothing set aside, for the whole request to be retried", async () => {
    const { log, steps } = fakeKafka(() => new KafkaJSError("Connection error: ECONNREFUSED"));
    await expect(publishIsolatingRefusals([row(1, 10), row(2, 10)], steps)).rejects.toThrow("ECONNREFUSED");
    expect(log).toEqual({ requests: 1, sent: [], setAside: [] });
  });
});

describe("a row's bytes count its trace headers as Kafka frames them", () => {
  // kafkajs' own record encoder (what the producer sends), so the bound is checked against the real framing.
  const encodeRecord = createRequire(import.meta.url)("kafkajs/src/protocol/recordBatch/record/v0/index.js") as (r: {
    key: Buffer;
    value: Buffer;
    headers?: Record<string, Buffer>;
  }) => { buffer: Buffer };
  const sizeOf = (key: string, value: string, headers?: Record<string, string>) =>
    encodeRecord({
      key: Buffer.from(key),
      value: Buffer.from(value),
      headers: headers && Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Buffer.from(v)])),
    }).buffer.length;

  test("the headers' share is an upper bound of what they add to the encoded record, and 0 without them", () => {
    const key = "123456";
    const value = JSON.stringify({ eventId: crypto.randomUUID(), pad: "x".repeat(300) });
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    expect(traceHeaderBytes({ request_id: null, traceparent: null })).toBe(0);
    for (const requestId of ["r", crypto.randomUUID(), "x".repeat(64), "é".repeat(32)]) {
      const withHeaders = sizeOf(key, value, { "x-request-id": requestId, traceparent });
      const without = sizeOf(key, value);
      const counted = traceHeaderBytes({ request_id: requestId, traceparent });
      expect(counted).toBeGreaterThanOrEqual(withHeaders - without);
      // Close to it, so the byte limit is not needlessly conservative.
      expect(counted - (withHeaders - without)).toBeLessThanOrEqual(20);
      expect(
        Buffer.byteLength(key) + Buffer.byteLength(value) + RECORD_OVERHEAD_BYTES + counted,
      ).toBeGreaterThanOrEqual(withHeaders);
    }
  });
});
