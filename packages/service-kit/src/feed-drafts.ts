// Feed drafts (migration 0033): the change-feed events of an outbox row, built by its writer from what it already
// holds (the envelope it built, the change history it wrote, the status move) and stored in the same statement or
// transaction as the row, so the feed sequencer numbers them without reading the outbox again. The one place that
// turns written events into draft rows: the single-row writers, the set-based batch writers and the facts of the
// other services all go through feedDraftRows.
import type postgres from "postgres";
import { feedEventsOf, type OutboxRowForFeed } from "./feed-events.ts";

/** What a writer knows about one outbox row it writes. */
export interface FeedDraftSource {
  /** The envelope as built (buildEnvelope). */
  envelope: OutboxRowForFeed["payload"];
  /** The changes of the change-history row written with it (listing or broker), when there is one. */
  changes?: readonly { path: string }[] | null;
  /** A listing's status move in this write (both null or absent when the status did not move). */
  statusFrom?: string | null;
  statusTo?: string | null;
}

/** One feed_drafts row, without its outbox_id: `event` is the index of its source in the batch. */
export interface FeedDraftRow {
  event: number;
  ordinal: number;
  partner_id: string;
  mode: string;
  type: string;
  event_id: string;
  record_type: string;
  version: number | null;
  data: Record<string, unknown>;
  occurred_at: string;
}

/**
 * The draft rows of a batch of outbox rows (pure). Events of a partner ID that is not a UUID are left out: the
 * feed is per partner, and such a row (hand-written, a test's) has no partner to number it for.
 */
export function feedDraftRows(sources: readonly FeedDraftSource[]): FeedDraftRow[] {
  return sources.flatMap((s, event) =>
    feedEventsOf({
      payload: s.envelope,
      changes: s.changes ? [...s.changes] : null,
      statusFrom: s.statusFrom ?? null,
      statusTo: s.statusTo ?? null,
    })
      .filter((d) => isUuidLike(d.partnerId))
      .map((d, ordinal) => ({
        event,
        ordinal,
        partner_id: d.partnerId,
        mode: d.mode,
        type: d.type,
        event_id: d.eventId,
        record_type: d.recordType,
        version: d.version,
        data: d.data,
        occurred_at: d.occurredAt,
      })),
  );
}

/**
 * The INSERT of draft rows, for a data-modifying CTE of the statement that writes their outbox rows: `outboxIds`
 * names a CTE of that statement with columns (id, event): the outbox row's ID and the 1-based index of its source
 * in the batch (`RETURNING id, 1 AS event` for a single row, `WITH ORDINALITY` for a batch).
 */
export function feedDraftsInsert(
  sql: postgres.Sql | postgres.TransactionSql,
  rows: readonly FeedDraftRow[],
  outboxIds: string,
) {
  return sql`INSERT INTO feed_drafts (outbox_id, ordinal, partner_id, mode, type, event_id, record_type, version, data, occurred_at)
    SELECT o.id, d.ordinal, d.partner_id, d.mode, d.type, d.event_id, d.record_type, d.version, d.data::jsonb, d.occurred_at
    FROM unnest(
      ${rows.map((r) => r.event + 1)}::int[], ${rows.map((r) => r.ordinal)}::smallint[], ${rows.map((r) => r.partner_id)}::uuid[],
      ${rows.map((r) => r.mode)}::text[], ${rows.map((r) => r.type)}::text[], ${rows.map((r) => r.event_id)}::uuid[],
      ${rows.map((r) => r.record_type)}::text[], ${rows.map((r) => r.version)}::int[],
      -- text, cast per row: a JSON array parameter of jsonb[] would store each document as a JSON string
      ${rows.map((r) => JSON.stringify(r.data))}::text[], ${rows.map((r) => r.occurred_at)}::timestamptz[]
    ) AS d(event, ordinal, partner_id, mode, type, event_id, record_type, version, data, occurred_at)
    JOIN ${sql(outboxIds)} o ON o.event = d.event`;
}

export const isUuidLike = (s: unknown): s is string =>
  typeof s === "string" && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);
