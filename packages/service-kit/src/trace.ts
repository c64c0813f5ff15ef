// A record's journey through the services (docs/operations.md, "Following one request through the logs"):
// the request ID of the write that caused it and a W3C trace context (https://www.w3.org/TR/trace-context/)
// travel with every event, as Kafka headers, and every log line about the record carries them.
//
// traceparent = "00-<trace-id: 32 hex>-<parent-id: 16 hex>-<flags: 2 hex>". The trace ID names the whole
// journey; the parent ID names the step (span) that sent the message, so each step that passes the trace on
// takes a new parent ID and keeps the trace ID and flags.
import { randomBytes } from "node:crypto";
import type { IHeaders } from "./kafka-client.ts";

/** Kafka header names: the same as the HTTP headers they come from. */
export const TRACE_HEADERS = { requestId: "x-request-id", traceparent: "traceparent" } as const;

/** What travels with an event: both null for events written outside a request (tools, old rows). */
export interface EventTrace {
  requestId: string | null;
  traceparent: string | null;
}

/** A request ID the API accepts from a client (else it makes one); anything else is not trusted into logs. */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/;

export const NO_TRACE: EventTrace = Object.freeze({ requestId: null, traceparent: null });

export interface Traceparent {
  traceId: string;
  parentId: string;
  flags: string;
}

const HEX = /^[0-9a-f]+$/;
const ALL_ZERO = /^0+$/;

/**
 * Parses a traceparent header as the W3C rules say: version 00 exactly as specified; a higher version (not ff)
 * by its version-00 prefix, ignoring what follows. Upper-case hex, all-zero IDs and version ff are invalid.
 */
export function parseTraceparent(value: string | null | undefined): Traceparent | null {
  if (typeof value !== "string") return null;
  const header = value.trim();
  if (header.length < 55) return null;
  const version = header.slice(0, 2);
  if (!HEX.test(version) || version === "ff") return null;
  if (version === "00" ? header.length !== 55 : header.length > 55 && header[55] !== "-") return null;
  if (header[2] !== "-" || header[35] !== "-" || header[52] !== "-") return null;
  const traceId = header.slice(3, 35);
  const parentId = header.slice(36, 52);
  const flags = header.slice(53, 55);
  if (!HEX.test(traceId) || !HEX.test(parentId) || !HEX.test(flags)) return null;
  if (ALL_ZERO.test(traceId) || ALL_ZERO.test(parentId)) return null;
  return { traceId, parentId, flags };
}

export function formatTraceparent(t: Traceparent): string {
  return `00-${t.traceId}-${t.parentId}-${t.flags}`;
}

function randomHex(bytes: number): string {
  // All zeros is invalid; with 8 or 16 random bytes it never happens in practice, but the rule is cheap to keep.
  for (;;) {
    const hex = randomBytes(bytes).toString("hex");
    if (!ALL_ZERO.test(hex)) return hex;
  }
}

/**
 * The traceparent of a new step: a child of `parent` (same trace ID and flags, a new parent ID) when it is a
 * valid traceparent, else the start of a new trace (flags 01: this trace is recorded, in the logs).
 */
export function childTraceparent(parent?: string | null): string {
  const parsed = parseTraceparent(parent);
  return formatTraceparent({
    traceId: parsed?.traceId ?? randomHex(16),
    parentId: randomHex(8),
    flags: parsed?.flags ?? "01",
  });
}

/** The trace ID of a traceparent, or null when it is not valid: what to grep for across services. */
export function traceIdOf(traceparent: string | null | undefined): string | null {
  return parseTraceparent(traceparent)?.traceId ?? null;
}

/** Kafka headers carrying a trace; absent values are left out rather than sent empty. */
export function traceHeaders(trace: EventTrace): Record<string, string> {
  const headers: Record<string, string> = {};
  if (trace.requestId) headers[TRACE_HEADERS.requestId] = trace.requestId;
  if (trace.traceparent) headers[TRACE_HEADERS.traceparent] = trace.traceparent;
  return headers;
}

function headerText(value: IHeaders[string] | undefined): string | null {
  const one = Array.isArray(value) ? value[0] : value;
  if (one === undefined || one === null) return null;
  const text = one.toString();
  return text === "" ? null : text;
}

/** The trace a consumed message carries; malformed values are dropped (they end up in log lines). */
export function traceFromHeaders(headers: IHeaders | undefined): EventTrace {
  const requestId = headerText(headers?.[TRACE_HEADERS.requestId]);
  const traceparent = headerText(headers?.[TRACE_HEADERS.traceparent]);
  return {
    requestId: requestId !== null && REQUEST_ID_PATTERN.test(requestId) ? requestId : null,
    traceparent: parseTraceparent(traceparent) ? traceparent : null,
  };
}

/**
 * The trace for an event a consumer produces because of the one it handles: same request ID, a child
 * traceparent (the consumer is the new step). Without an incoming trace the new event starts one.
 */
export function consequenceTrace(cause: EventTrace): EventTrace {
  return { requestId: cause.requestId, traceparent: childTraceparent(cause.traceparent) };
}
