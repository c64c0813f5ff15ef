import { describe, expect, test } from "bun:test";
import {
  childTraceparent,
  consequenceTrace,
  formatTraceparent,
  parseTraceparent,
  traceFromHeaders,
  traceHeaders,
  traceIdOf,
  TRACE_HEADERS,
} from "./trace.ts";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";
const VALID = `00-${TRACE_ID}-${PARENT_ID}-01`;
const SHAPE = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

describe("parseTraceparent follows the W3C trace-context rules", () => {
  test("reads the example header of the specification", () => {
    expect(parseTraceparent(VALID)).toEqual({ traceId: TRACE_ID, parentId: PARENT_ID, flags: "01" });
    expect(parseTraceparent(`00-${TRACE_ID}-${PARENT_ID}-00`)?.flags).toBe("00");
    expect(formatTraceparent(parseTraceparent(VALID)!)).toBe(VALID);
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

describe("childTraceparent makes the next step of a trace", () => {
  test("keeps the trace ID and flags of a valid parent, with a new parent ID", () => {
    const child = childTraceparent(VALID);
    expect(child).toMatch(SHAPE);
    const parsed = parseTraceparent(child)!;
    expect(parsed.traceId).toBe(TRACE_ID);
    expect(parsed.flags).toBe("01");
    expect(parsed.parentId).not.toBe(PARENT_ID);
    expect(parseTraceparent(childTraceparent(`00-${TRACE_ID}-${PARENT_ID}-00`))!.flags).toBe("00");
    // A later version's parent gives a version-00 child.
    expect(childTraceparent(`02-${TRACE_ID}-${PARENT_ID}-01-more`)).toStartWith(`00-${TRACE_ID}-`);
  });

  test("starts a new trace without a valid parent", () => {
    const made = new Set<string>();
    for (const parent of [undefined, null, "", "garbage", VALID.toUpperCase()]) {
      const created = childTraceparent(parent);
      expect(created).toMatch(SHAPE);
      expect(parseTraceparent(created)).not.toBeNull();
      expect(created.endsWith("-01")).toBe(true);
      made.add(traceIdOf(created)!);
    }
    expect(made.size).toBe(5);
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

  test("an event produced because of another keeps the request ID and continues the trace", () => {
    const next = consequenceTrace({ requestId: "req-1", traceparent: VALID });
    expect(next.requestId).toBe("req-1");
    expect(traceIdOf(next.traceparent)).toBe(TRACE_ID);
    expect(next.traceparent).not.toBe(VALID);
    const fresh = consequenceTrace({ requestId: null, traceparent: null });
    expect(fresh.requestId).toBeNull();
    expect(fresh.traceparent).toMatch(SHAPE);
  });
});
