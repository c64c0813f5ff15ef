// The facts partners are told about by webhook (packages/contracts/src/events/partner-facts.ts) are written to
// the outbox by the statement or transaction that makes them true, like every other event: the API's relay
// publishes them to Topics.partnerEvents, and nothing is announced that did not happen or lost after it happened.
// Each fact is built in JS from its catalog definition; SQL only stores it.
import {
  buildEnvelope,
  partnerFactKey,
  type EnvelopeFields,
  type EventDefinition,
  type WebhookEventType,
} from "@pss/contracts";
import type { Static } from "@sinclair/typebox";
import type postgres from "postgres";

type Sql = postgres.Sql | postgres.TransactionSql;

/** One outbox row: topic, Kafka key and the whole message value. */
export interface OutboxFactRow {
  topic: string;
  messageKey: string;
  envelope: Record<string, unknown>;
}

/**
 * A fact's outbox row. The key is `<aggregate type>:<aggregate ID>` (one partition, so one order, for all facts of
 * a record), not the bare ID the aggregate's own event topic uses: readers of the outbox that look for an
 * aggregate's events by key keep finding only those.
 */
export function partnerFactRow<E extends EventDefinition<WebhookEventType>>(
  fact: E,
  fields: EnvelopeFields,
  payload: Static<E["payload"]>,
): OutboxFactRow {
  return {
    topic: fact.topic.name,
    messageKey: partnerFactKey(fact.type, fields.aggregateId),
    envelope: buildEnvelope(fact, fields, payload),
  };
}

/** Stores fact rows (none: no statement). */
export async function insertOutboxFacts(sql: Sql, rows: OutboxFactRow[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    INSERT INTO outbox (topic, message_key, payload)
    SELECT x.topic, x.message_key, x.payload::jsonb
    FROM unnest(${rows.map((r) => r.topic)}::text[], ${rows.map((r) => r.messageKey)}::text[], ${rows.map((r) => JSON.stringify(r.envelope))}::text[]) AS x(topic, message_key, payload)`;
}

/**
 * Advisory lock class of "counting an office's leads" (the second key is the office ID). Whoever announces
 * lead.received with an office's count holds it: the leads service for live leads, the API for a test key's
 * simulated ones, so each announcement carries the office's exact count and a later one never a smaller count.
 */
export const OFFICE_LEAD_COUNT_LOCK = 727_013;
