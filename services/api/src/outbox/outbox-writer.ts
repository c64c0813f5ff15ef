// Writes an event row in the caller's transaction: the change and its announcement commit together. Every event
// is built from its definition in the catalog (packages/contracts/src/events, docs/events.md).
import type postgres from "postgres";
import { buildEnvelope, type EnvelopeFields, type EventDefinition } from "@pss/contracts";
import type { Static } from "@sinclair/typebox";
import { NO_TRACE, sqlJson, type EventTrace } from "@pss/service-kit";

/** The outbox columns that carry a trace (migration 0007). */
export function traceColumns(trace: EventTrace = NO_TRACE): { request_id: string | null; traceparent: string | null } {
  return { request_id: trace.requestId, traceparent: trace.traceparent };
}

/**
 * The outbox row of one event: topic, key (the aggregate ID: one partition per aggregate keeps its events in
 * order) and the envelope, with the request's trace.
 */
export function outboxRow<E extends EventDefinition>(
  event: E,
  fields: EnvelopeFields,
  payload: Static<E["payload"]>,
  trace?: EventTrace,
) {
  const envelope = buildEnvelope(event, fields, payload);
  return { topic: event.topic.name, message_key: fields.aggregateId, envelope, ...traceColumns(trace) };
}

export async function appendEvent<E extends EventDefinition>(
  tx: postgres.TransactionSql,
  event: E,
  fields: EnvelopeFields,
  payload: Static<E["payload"]>,
  trace?: EventTrace,
): Promise<void> {
  const row = outboxRow(event, fields, payload, trace);
  await tx`
    INSERT INTO outbox (topic, message_key, payload, request_id, traceparent)
    VALUES (${row.topic}, ${row.message_key}, ${sqlJson(tx, row.envelope)}, ${row.request_id}, ${row.traceparent})`;
}
