// Writes an event row in the caller's transaction: the change and its announcement commit together.
import type postgres from "postgres";
import type { RecordMode, TopicSpec } from "@pss/contracts";
import { NO_TRACE, sqlJson, type EventTrace } from "@pss/service-kit";

export interface OutboxEvent {
  topic: TopicSpec;
  type: string;
  aggregateType: "listing" | "broker" | "lead";
  aggregateId: string;
  version: number;
  partnerId: string;
  /** The record's mode: on every envelope, so every consumer (webhooks, indexer, leads) can tell test records. */
  mode: RecordMode;
  payload: unknown;
  /** The request that caused the event; the relay sends it as Kafka headers (x-request-id, traceparent). */
  trace?: EventTrace;
}

/** The envelope fields every event carries; the single-statement writers let SQL add ID, version and payload. */
export function envelopeHeader(event: Pick<OutboxEvent, "type" | "aggregateType" | "partnerId" | "mode">) {
  return { eventId: crypto.randomUUID(), type: event.type, aggregateType: event.aggregateType, partnerId: event.partnerId, mode: event.mode, occurredAt: new Date().toISOString() };
}

/** The outbox columns that carry a trace (migration 0007). */
export function traceColumns(trace: EventTrace = NO_TRACE): { request_id: string | null; traceparent: string | null } {
  return { request_id: trace.requestId, traceparent: trace.traceparent };
}

export async function appendEvent(tx: postgres.TransactionSql, event: OutboxEvent): Promise<void> {
  const envelope = { ...envelopeHeader(event), aggregateId: event.aggregateId, version: event.version, payload: event.payload };
  const { request_id, traceparent } = traceColumns(event.trace);
  // Key = aggregate id: one partition per aggregate keeps its events in order.
  await tx`
    INSERT INTO outbox (topic, message_key, payload, request_id, traceparent)
    VALUES (${event.topic.name}, ${event.aggregateId}, ${sqlJson(tx, envelope)}, ${request_id}, ${traceparent})`;
}
