// The events of a batch's writes, in the batch's transaction, as one statement whatever the count. This is the
// one place a batch writes its outbox rows: anything written beside each event belongs here too.
import type postgres from "postgres";
import { sqlJson } from "@pss/service-kit";
import type { outboxRow } from "./outbox-writer.ts";

/** One written item's event: its outbox row, the paths it changed and its status move (null when none). */
export interface BatchEvent {
  row: ReturnType<typeof outboxRow>;
  changedPaths: string[];
  statusFrom: string | null;
  statusTo: string | null;
}

/** Rows are inserted in the order given, so the outbox IDs follow the batch's item order. */
export async function appendBatchEvents(tx: postgres.TransactionSql, events: BatchEvent[]): Promise<void> {
  if (events.length === 0) return;
  const rows = events.map((e, n) => ({
    n,
    topic: e.row.topic,
    message_key: e.row.message_key,
    request_id: e.row.request_id,
    traceparent: e.row.traceparent,
    payload: e.row.envelope,
  }));
  await tx`
    INSERT INTO outbox (topic, message_key, request_id, traceparent, payload)
    SELECT r.topic, r.message_key, r.request_id, r.traceparent, r.payload
    FROM jsonb_to_recordset(${sqlJson(tx, rows)}::jsonb)
      AS r(n int, topic text, message_key text, request_id text, traceparent text, payload jsonb)
    ORDER BY r.n`;
}
