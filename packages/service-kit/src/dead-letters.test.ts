import { describe, expect, test } from "bun:test";
import { replayHeaders, toDeadLetter } from "./dead-letters.ts";

// What event-consumer.ts writes: the original headers plus why and where from.
const letter = toDeadLetter(0, {
  offset: "41",
  key: Buffer.from("1234"),
  value: Buffer.from(
    JSON.stringify({ eventId: "e-1", type: "listing.upserted", aggregateId: "1234", version: 3, payload: {} }),
  ),
  headers: {
    "x-request-id": Buffer.from("req-abc"),
    traceparent: Buffer.from("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
    "x-dead-letter-reason": Buffer.from("event version 3 is ahead of the stored version 2"),
    "x-original-topic": Buffer.from("pss.listing-events.v1"),
    "x-original-partition": Buffer.from("4"),
    "x-original-offset": Buffer.from("977"),
    "x-consumer-group": Buffer.from("pss-indexer"),
    "x-failed-at": Buffer.from("2026-01-02T03:04:05.000Z"),
  },
});

describe("dead letters", () => {
  test("a dead letter tells where it came from, why, and which event it holds", () => {
    expect(letter).toMatchObject({
      partition: 0,
      offset: "41",
      reason: "event version 3 is ahead of the stored version 2",
      sourceTopic: "pss.listing-events.v1",
      sourcePartition: 4,
      sourceOffset: "977",
      consumerGroup: "pss-indexer",
      failedAt: "2026-01-02T03:04:05.000Z",
      key: "1234",
      event: { type: "listing.upserted", aggregateId: "1234", version: 3, eventId: "e-1" },
    });
  });

  test("a message that is not an envelope still shows its origin, with no event fields", () => {
    const raw = toDeadLetter(0, {
      offset: "1",
      key: null,
      value: Buffer.from("not json"),
      headers: { "x-original-topic": Buffer.from("t"), "x-original-partition": Buffer.from("x") },
    });
    expect(raw).toMatchObject({
      event: null,
      key: null,
      sourceTopic: "t",
      sourcePartition: null,
      reason: null,
      bytes: 8,
    });
  });

  test("a replay carries the original headers, none of the dead-letter ones, and says where it was replayed from", () => {
    expect(replayHeaders(letter, "pss.indexer.dead-letter.v1")).toEqual({
      "x-request-id": "req-abc",
      traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      "x-replayed-from": "pss.indexer.dead-letter.v1:0:41",
    });
  });
});
