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
import { feedDraftRows, feedDraftsInsert, type FeedDraftSource } from "./feed-drafts.ts";
import type { EventTrace } from "./trace.ts";
import { activeRequestId, activeTraceparent } from "./tracing.ts";

type Sql = postgres.Sql | postgres.TransactionSql;

/** One outbox row: topic, Kafka key and the whole message value. */
export interface OutboxFactRow {
  topic: string;
  messageKey: string;
  envelope: FeedDraftSource["envelope"];
  /**
   * The event it follows from (a consumed message's ctx.trace): the fact is a later step of that write's trace.
   * Absent: the active context's (the message being handled, when its handler writes the fact).
   */
  trace?: EventTrace;
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

/**
 * Stores fact rows and their change-feed drafts (feed-drafts.ts) in one statement (none: no statement). The rows get
 * IDs in the order given; feed_pending NULL: the drafts, not the row, tell the sequencer there is work.
 */
export async function insertOutboxFacts(sql: Sql, rows: OutboxFactRow[]): Promise<void> {
  if (rows.length === 0) return;
  const drafts = feedDraftRows(rows.map((r) => ({ envelope: r.envelope })));
  const active = { requestId: activeRequestId(), traceparent: activeTraceparent() };
  const traces = rows.map((r) => r.trace ?? active);
  await sql`
    WITH x AS (
      SELECT nextval('outbox_id_seq') AS id, t.*
      FROM unnest(${rows.map((r) => r.topic)}::text[], ${rows.map((r) => r.messageKey)}::text[], ${rows.map((r) => JSON.stringify(r.envelope))}::text[],
        ${traces.map((t) => t.requestId)}::text[], ${traces.map((t) => t.traceparent)}::text[])
        WITH ORDINALITY AS t(topic, message_key, payload, request_id, traceparent, event)
    ), o AS (
      INSERT INTO outbox (id, topic, message_key, payload, request_id, traceparent, feed_pending)
      SELECT id, topic, message_key, payload::jsonb, request_id, traceparent, NULL FROM x ORDER BY id
    )
    ${feedDraftsInsert(sql, drafts, "x")}`;
}

/**
 * Advisory lock class of "counting an office's leads" (the second key is the office ID). Whoever announces
 * lead.received with an office's count holds it: the leads service for live leads, the API for a test key's
 * simulated ones, so each announcement carries the office's exact count and a later one never a smaller count.
 */
export const OFFICE_LEAD_COUNT_LOCK = 727_013;
