// Reconciliation paging that never misses a committed change (docs/api-internals.md, "Paging never misses a committed change").
//
// Records are ordered by (write_xid, id), write_xid being the ID of the transaction that last wrote the record
// (migration 0006). A page returns only records whose write_xid is below the horizon: the oldest transaction
// still running when the page is read (pg_snapshot_xmin). Every transaction that can still commit has an ID
// at or above the horizon, so once a reader has passed a position nothing can appear behind it.
// Records already committed beyond the horizon are not the end of the pass: the page stops before them and
// nextCursor stays non-null, so the reader comes back for them once the older transactions have finished.
import type postgres from "postgres";
import { encodeCursor, type PagePosition, type PageRequest } from "../http/pagination.ts";
import type { RecordScope } from "./record-scope.ts";

type Sql = postgres.Sql | postgres.TransactionSql;

/** A fetched row and its position. */
export interface Positioned<T> {
  row: T;
  position: PagePosition;
}

export interface CommitSafePageArgs<T> {
  table: "brokers" | "listings";
  /** The partner's records of one mode (the horizon is global; the pass is per partner and mode). */
  scope: RecordScope;
  page: PageRequest;
  /** Rows of the partner's scope strictly after `after` in (write_xid, id) order, `updatedSince` applied, at most `limit`. */
  fetch(after: PagePosition, limit: number, updatedSince: Date | null): Promise<Positioned<T>[]>;
  /** How long a page with nothing settled yet waits for older transactions to finish before answering empty. */
  maxWaitMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

const START: PagePosition = { xid: "0", id: "0" };
const WAIT_STEP_MS = 50;
const DEFAULT_MAX_WAIT_MS = 1_000;

/** The horizon, and for a first page with updatedSince the first position the pass has to cover. */
async function window(
  sql: Sql,
  args: { table: string; scope: RecordScope; since: Date | null },
): Promise<{ horizon: bigint; first: bigint | null }> {
  const [row] = args.since
    ? await sql`
        SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon,
               (SELECT min(write_xid) FROM ${sql(args.table)}
                WHERE partner_id = ${args.scope.partnerId} AND mode = ${args.scope.mode} AND updated_at >= ${args.since})::text AS first`
    : await sql`SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon, NULL::text AS first`;
  return { horizon: BigInt(row!.horizon), first: row!.first === null ? null : BigInt(row!.first) };
}

export async function readCommitSafePage<T>(
  sql: Sql,
  args: CommitSafePageArgs<T>,
): Promise<{ rows: T[]; nextCursor: string | null }> {
  const { page } = args;
  const maxWait = args.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
  const sleep = args.sleep ?? ((ms: number) => Bun.sleep(ms));
  let start: PagePosition | null = page.after;
  const deadline = Date.now() + maxWait;
  for (;;) {
    const { horizon, first } = await window(sql, {
      table: args.table,
      scope: args.scope,
      since: start ? null : page.updatedSince,
    });
    if (!start) {
      // A first page with updatedSince starts at the lowest position among matching records, or at the horizon
      // if that is lower: a transaction still running may commit a matching record there.
      start = page.updatedSince ? { xid: String(first !== null && first < horizon ? first : horizon), id: "0" } : START;
      // Strictly after (xid, 0) includes every record at xid itself (ids start at 1).
    }
    const fetched = await args.fetch(start, page.limit, page.updatedSince);
    const settledCount = fetched.findIndex((f) => BigInt(f.position.xid) >= horizon);
    const settled = settledCount === -1 ? fetched : fetched.slice(0, settledCount);
    const blocked = settled.length < fetched.length;
    if (blocked && settled.length === 0 && Date.now() + WAIT_STEP_MS <= deadline) {
      await sleep(WAIT_STEP_MS);
      continue;
    }
    const last = settled.at(-1)?.position ?? start;
    const more = blocked || fetched.length === page.limit;
    return { rows: settled.map((f) => f.row), nextCursor: more ? encodeCursor(last, page.updatedSince) : null };
  }
}
