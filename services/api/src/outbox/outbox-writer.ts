// Writes event rows in the caller's transaction: the change and its announcement commit together. Every event
// is built from its definition in the catalog (packages/contracts/src/events, docs/events.md). Each row's
// change-feed events go with it as feed drafts (migration 0033, feed-drafts.ts) in the same statement; the row
// itself is written with feed_pending NULL (only a previous release's writer leaves it to its default, true).
import type postgres from "postgres";
import { buildEnvelope, type EnvelopeFields, type EventDefinition } from "@pss/contracts";
import type { Static } from "@sinclair/typebox";
import {
  activeTraceparent,
  inChildSpan,
  POSTGRES_SPAN,
  feedDraftRows,
  feedDraftsInsert,
  NO_TRACE,
  type EventTrace,
  type FeedDraftRow,
  type FeedDraftSource,
} from "@pss/service-kit";

/**
 * The outbox columns that carry a trace (migration 0007): the request's ID, and the span writing the row (the
 * active one, so the relay's span is its child), else the request's traceparent.
 */
export function traceColumns(trace: EventTrace = NO_TRACE): { request_id: string | null; traceparent: string | null } {
  return { request_id: trace.requestId, traceparent: activeTraceparent() ?? trace.traceparent };
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

export type OutboxEventRow = ReturnType<typeof outboxRow>;

/** What the change feed needs beyond the envelope: the change-history row's changes, a listing's status move. */
export type FeedFacts = Omit<FeedDraftSource, "envelope">;

/** One outbox row to write and what its feed events need. */
export interface OutboxWrite {
  row: OutboxEventRow;
  feed?: FeedFacts;
}

/**
 * The feed draft rows of a batch of outbox rows (pure): `event` is the row's index in `writes`. For set-based
 * writers that insert the outbox rows in their own statement (feedDraftsInsert joins them to the rows' IDs).
 */
export function feedDraftsOf(writes: readonly OutboxWrite[]): FeedDraftRow[] {
  return feedDraftRows(writes.map((w) => ({ envelope: w.row.envelope, ...w.feed })));
}

/**
 * Writes a batch of outbox rows and their feed drafts in one statement (one INSERT per table). The rows get IDs
 * in the batch's order, so the relay publishes them, and the sequencer numbers them, in that order.
 */
export async function appendEvents(tx: postgres.TransactionSql | postgres.Sql, writes: readonly OutboxWrite[]) {
  if (writes.length === 0) return;
  const rows = writes.map((w) => w.row);
  await inChildSpan(
    "outbox write",
    async (span) => {
      span?.setAttribute("pss.outbox_rows", rows.length);
      // Rows that carry a trace name this span, so the relay's publish is its child.
      const here = span ? activeTraceparent() : null;
      await tx`
    WITH x AS (
      SELECT nextval('outbox_id_seq') AS id, t.*
      FROM unnest(${rows.map((r) => r.topic)}::text[], ${rows.map((r) => r.message_key)}::text[],
        ${rows.map((r) => JSON.stringify(r.envelope))}::text[], ${rows.map((r) => r.request_id)}::text[],
        ${rows.map((r) => (here && r.traceparent ? here : r.traceparent))}::text[]) WITH ORDINALITY AS t(topic, message_key, payload, request_id, traceparent, event)
    ), o AS (
      INSERT INTO outbox (id, topic, message_key, payload, request_id, traceparent, feed_pending)
      SELECT id, topic, message_key, payload::jsonb, request_id, traceparent, NULL FROM x ORDER BY id
    )
    ${feedDraftsInsert(tx, feedDraftsOf(writes), "x")}`;
    },
    { attributes: POSTGRES_SPAN },
  );
}

/** One event: its outbox row and its feed drafts (see appendEvents). */
export async function appendEvent<E extends EventDefinition>(
  tx: postgres.TransactionSql,
  event: E,
  fields: EnvelopeFields,
  payload: Static<E["payload"]>,
  trace?: EventTrace,
  feed?: FeedFacts,
): Promise<void> {
  await appendEvents(tx, [{ row: outboxRow(event, fields, payload, trace), feed }]);
}
