// A record's journey through the services (docs/operations.md, "Following one request"): the request ID of the
// write that caused it and a W3C trace context (https://www.w3.org/TR/trace-context/) travel with every event, as
// Kafka headers, and every log line about the record carries them. The spans themselves are OpenTelemetry's
// (tracing.ts): this file only names the headers and reads and writes them.
//
// traceparent = "00-<trace-id: 32 hex>-<parent-id: 16 hex>-<flags: 2 hex>". The trace ID names the whole journey;
// the parent ID names the span that sent the message (each step is a span of its own); flag 01: recorded.
import { parseTraceParent } from "@opentelemetry/core";
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

/**
 * A traceparent header read by OpenTelemetry's W3C propagator: version 00 exactly as specified, a later version by
 * its version-00 prefix; upper-case hex, all-zero IDs and version ff are invalid (null).
 */
export function parseTraceparent(value: string | null | undefined): Traceparent | null {
  if (typeof value !== "string") return null;
  const parsed = parseTraceParent(value);
  if (!parsed) return null;
  return { traceId: parsed.traceId, parentId: parsed.spanId, flags: parsed.traceFlags.toString(16).padStart(2, "0") };
}

/** The client's X-Request-Id when it is acceptable (1-64 of A-Z a-z 0-9 . _ : -), else null. */
export function acceptedRequestId(value: string | null | undefined): string | null {
  return typeof value === "string" && REQUEST_ID_PATTERN.test(value) ? value : null;
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
  return { requestId: acceptedRequestId(requestId), traceparent: parseTraceparent(traceparent) ? traceparent : null };
}
