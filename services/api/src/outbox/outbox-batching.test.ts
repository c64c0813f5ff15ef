import { describe, expect, test } from "bun:test";
import { KafkaJSError, KafkaJSNonRetriableError, KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError } from "kafkajs";
import { permanentKafkaFailure, planBatch, type OutboxRow } from "./outbox-batching.ts";

const row = (id: number, bytes: number): OutboxRow => ({ id: String(id), topic: "t", message_key: "k", payload: "", bytes });
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
  const protocol = (type: string, retriable: boolean) => new KafkaJSProtocolError({ type, message: `broker says ${type}`, retriable } as never);

  test("a message too large, wrapped the way the producer throws it, is permanent for the rows sent", () => {
    // Both of kafkajs' retriers wrap it: new KafkaJSNonRetriableError(e, { cause: e.cause || e }).
    const refused = protocol("MESSAGE_TOO_LARGE", false);
    const err = new KafkaJSNonRetriableError(new KafkaJSNonRetriableError(refused, { cause: refused }), { cause: refused });
    expect(permanentKafkaFailure(err)).toEqual({ reason: "MESSAGE_TOO_LARGE: broker says MESSAGE_TOO_LARGE", scope: "rows" });
    expect(permanentKafkaFailure(protocol("INVALID_RECORD", false))?.scope).toBe("rows");
  });

  test("topic authorization is permanent for the whole topic", () => {
    expect(permanentKafkaFailure(new KafkaJSNonRetriableError(protocol("TOPIC_AUTHORIZATION_FAILED", false), { cause: protocol("TOPIC_AUTHORIZATION_FAILED", false) }))?.scope).toBe("topic");
  });

  test("connection loss, a missing topic, exhausted retries and unknown errors are transient", () => {
    expect(permanentKafkaFailure(new KafkaJSError("Connection error: ECONNREFUSED"))).toBeNull();
    expect(permanentKafkaFailure(protocol("UNKNOWN_TOPIC_OR_PARTITION", true))).toBeNull();
    expect(permanentKafkaFailure(new KafkaJSNumberOfRetriesExceeded(protocol("NOT_LEADER_FOR_PARTITION", true), { retryCount: 5, retryTime: 100 } as never))).toBeNull();
    expect(permanentKafkaFailure(new Error("boom"))).toBeNull();
    expect(permanentKafkaFailure(null)).toBeNull();
  });
});
