// The events of a batch's writes, in the batch's transaction, as one statement whatever the count: the outbox rows
// and their change-feed drafts (appendEvents). This is the one place a batch writes its outbox rows.
import type postgres from "postgres";
import { appendEvents, type outboxRow } from "./outbox-writer.ts";

/** One written item's event: its outbox row, the paths it changed and its status move (null when none). */
export interface BatchEvent {
  row: ReturnType<typeof outboxRow>;
  changedPaths: string[];
  statusFrom: string | null;
  statusTo: string | null;
}

/** Rows are inserted in the order given, so the outbox IDs follow the batch's item order. */
export async function appendBatchEvents(tx: postgres.TransactionSql, events: BatchEvent[]): Promise<void> {
  await appendEvents(
    tx,
    events.map((e) => ({
      row: e.row,
      feed: { changes: e.changedPaths.map((path) => ({ path })), statusFrom: e.statusFrom, statusTo: e.statusTo },
    })),
  );
}
