// Write amplification: WAL bytes a measured phase wrote, from pg_current_wal_lsn() before and after it. The WAL
// is the cluster's, not this database's: every other database on the same PostgreSQL (other worktrees on a shared
// machine) adds to it, so the figure means something only on an otherwise quiet cluster. The checkpoints that
// began during the phase are counted too: the first change to each page after one writes the whole 8 KB page.
import type postgres from "postgres";

export interface WalMark {
  lsn: string;
  checkpoints: number;
}

export interface WalUsed {
  bytes: number;
  /** Checkpoints (timed or requested, by anyone on the cluster) between the two marks. */
  checkpoints: number;
}

export async function walMark(sql: postgres.Sql): Promise<WalMark> {
  const [row] = await sql`
    SELECT pg_current_wal_lsn()::text AS lsn, (checkpoints_timed + checkpoints_req)::int AS checkpoints FROM pg_stat_bgwriter`;
  return { lsn: row!.lsn as string, checkpoints: row!.checkpoints as number };
}

export async function walSince(sql: postgres.Sql, from: WalMark): Promise<WalUsed> {
  const [row] = await sql`
    SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), ${from.lsn}::pg_lsn)::float8 AS bytes,
           (checkpoints_timed + checkpoints_req)::int AS checkpoints FROM pg_stat_bgwriter`;
  return { bytes: row!.bytes as number, checkpoints: (row!.checkpoints as number) - from.checkpoints };
}

/** "3,412 B/row (12.3 MB for 3,600 rows; 0 checkpoints during it)": a phase's WAL for a row's notes. */
export function describeWal(used: WalUsed, rows: number): string {
  return `${walPerRow(used, rows).toLocaleString("en")} B/row (${(used.bytes / 1e6).toFixed(1)} MB for ${rows.toLocaleString("en")} rows; ${used.checkpoints} checkpoint${used.checkpoints === 1 ? "" : "s"} during it)`;
}

export function walPerRow(used: WalUsed, rows: number): number {
  return rows > 0 ? Math.round(used.bytes / rows) : Number.NaN;
}
