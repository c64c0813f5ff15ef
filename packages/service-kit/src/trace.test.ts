import { describe, expect, test } from "bun:test";
import {
  acceptedRequestId,
  parseTraceparent,
  traceFromHeaders,
  traceHeaders,
  traceIdOf,
  TRACE_HEADERS,
} from "./trace.ts";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";
const VALID = `00-${TRACE_ID}-${PARENT_ID}-01`;

describe("parseTraceparent follows the W3C trace-context rules", () => {
  test("reads the example header of the specification", () => {
    expect(parseTraceparent(VALID)).toEqual({ traceId: TRACE_ID, parentId: PARENT_ID, flags: "01" });
    expect(parseTraceparent(`00-${TRACE_ID}-${PARENT_ID}-00`)?.flags).toBe("00");
  });

  test("refuses malformed headers", () => {
    const refused = [
      "",
      "00",
      VALID.toUpperCase(), // hex must be lower case
      `00-${TRACE_ID}-${PARENT_ID}-01-extra`, // version 00 has exactly four fields
      `00-${TRACE_ID}-${PARENT_ID}-1`, // flags are two hex digits
      `00-${"0".repeat(32)}-${PARENT_ID}-01`, // all-zero trace ID
      `00-${TRACE_ID}-${"0".repeat(16)}-01`, // all-zero parent ID
      `ff-${TRACE_ID}-${PARENT_ID}-01`, // version ff is forbidden
      `0g-${TRACE_ID}-${PARENT_ID}-01`,
      `00-${TRACE_ID.slice(1)}x-${PARENT_ID}-01`,
      `00_${TRACE_ID}_${PARENT_ID}_01`,
      `00-${TRACE_ID}-${PARENT_ID.slice(2)}-0001`,
    ];
    for (const header of refused)
      expect({ header, parsed: parseTraceparent(header) }).toEqual({ header, parsed: null });
    expect(parseTraceparent(null)).toBeNull();
    expect(traceIdOf(VALID)).toBe(TRACE_ID);
    expect(traceIdOf(VALID.toUpperCase())).toBeNull();
    expect(parseTraceparent(undefined)).toBeNull();
  });

  test("a later version is read by its version-00 prefix; what follows a dash is ignored", () => {
    expect(parseTraceparent(`01-${TRACE_ID}-${PARENT_ID}-01`)).toEqual({
      traceId: TRACE_ID,
      parentId: PARENT_ID,
      flags: "01",
    });
    expect(parseTraceparent(`cc-${TRACE_ID}-${PARENT_ID}-01-what-ever`)).toEqual({
      traceId: TRACE_ID,
      parentId: PARENT_ID,
      flags: "01",
    });
    expect(parseTraceparent(`cc-${TRACE_ID}-${PARENT_ID}-01x`)).toBeNull();
  });
});

describe("acceptedRequestId", () => {
  test("takes 1-64 letters, digits and . _ : - and nothing else", () => {
    expect(acceptedRequestId("req-1.a_b:c")).toBe("req-1.a_b:c");
    for (const bad of [null, undefined, "", "x".repeat(65), "a b", 'a"}\n{"level":"error'])
      expect({ bad, accepted: acceptedRequestId(bad) }).toEqual({ bad, accepted: null });
  });
});

describe("trace headers on Kafka messages", () => {
  test("traceHeaders leaves absent values out", () => {
    expect(traceHeaders({ requestId: "req-1", traceparent: VALID })).toEqual({
      [TRACE_HEADERS.requestId]: "req-1",
      [TRACE_HEADERS.traceparent]: VALID,
    });
    expect(traceHeaders({ requestId: null, traceparent: null })).toEqual({});
  });

  test("traceFromHeaders reads buffers and strings and drops values that are not a request ID or a traceparent", () => {
    expect(traceFromHeaders({ "x-request-id": Buffer.from("req-1"), traceparent: Buffer.from(VALID) })).toEqual({
      requestId: "req-1",
      traceparent: VALID,
    });
    expect(traceFromHeaders({ "x-request-id": "req-2", traceparent: [Buffer.from(VALID)] })).toEqual({
      requestId: "req-2",
      traceparent: VALID,
    });
    expect(traceFromHeaders(undefined)).toEqual({ requestId: null, traceparent: null });
    expect(
      traceFromHeaders({ "x-request-id": Buffer.from('a"}\n{"level":"error'), traceparent: Buffer.from("nope") }),
    ).toEqual({ requestId: null, traceparent: null });
    expect(traceFromHeaders({ "x-request-id": Buffer.from("x".repeat(65)) }).requestId).toBeNull();
  });
});
