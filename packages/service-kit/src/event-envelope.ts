// Reading one Kafka message: the envelope, checked tolerantly (unknown fields are ignored, the fields consumers
// use are checked), and the log fields that place it.
import { Value } from "@sinclair/typebox/value";
import { AnyEventEnvelope, registerFormats } from "@pss/contracts";
import { traceIdOf, type EventTrace } from "./trace.ts";

export type Parsed = { ok: true; event: AnyEventEnvelope } | { ok: false; reason: string };

export function parseEnvelope(value: Buffer | null): Parsed {
  if (!value) return { ok: false, reason: "empty message" };
  let json: unknown;
  try {
    json = JSON.parse(value.toString("utf8"));
  } catch {
    return { ok: false, reason: "not JSON" };
  }
  // The envelope's uuid and date-time formats must not depend on some other module (Elysia) being imported.
  registerFormats();
  if (!Value.Check(AnyEventEnvelope, json)) {
    const first = [...Value.Errors(AnyEventEnvelope, json)][0];
    return {
      ok: false,
      reason: `not an event envelope: ${first ? `${first.path || "/"} ${first.message}` : "invalid"}`,
    };
  }
  return { ok: true, event: json };
}

/** The log fields of one message: its trace, its position and, when it is an envelope, the event. */
export function messageLogFields(
  position: { topic: string; partition: number; offset: string },
  trace: EventTrace,
  event?: AnyEventEnvelope,
): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  if (trace.requestId) fields.requestId = trace.requestId;
  if (trace.traceparent) {
    // The trace ID alone opens the trace in Zipkin; the traceparent names this step's span.
    fields.traceId = traceIdOf(trace.traceparent);
    fields.traceparent = trace.traceparent;
  }
  if (event)
    Object.assign(fields, {
      eventId: event.eventId,
      eventType: event.type,
      aggregateType: event.aggregateType,
      aggregateId: event.aggregateId,
      version: event.version,
    });
  return Object.assign(fields, position);
}
