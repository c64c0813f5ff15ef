// Writes an event row in the caller's transaction: the change and its announcement commit together.
import type postgres from "postgres";
import type { RecordMode, TopicSpec } from "@pss/contracts";

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
}

/** The envelope fields every event carries; the single-statement writers let SQL add ID, version and payload. */
export function envelopeHeader(event: Pick<OutboxEvent, "type" | "aggregateType" | "partnerId" | "mode">) {
  return { eventId: crypto.randomUUID(), type: event.type, aggregateType: event.aggregateType, partnerId: event.partnerId, mode: event.mode, occurredAt: new Date().toISOString() };
}

export async function appendEvent(tx: postgres.TransactionSql, event: OutboxEvent): Promise<void> {
  const envelope = { ...envelopeHeader(event), aggregateId: event.aggregateId, version: event.version, payload: event.payload };
  // Key = aggregate id: one partition per aggregate keeps its events in order.
  await tx`INSERT INTO outbox (topic, message_key, payload) VALUES (${event.topic.name}, ${event.aggregateId}, ${tx.json(envelope as never)})`;
}
