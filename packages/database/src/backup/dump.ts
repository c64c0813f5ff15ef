// A logical backup of the database: every table's rows in PostgreSQL's COPY text format (gzip), read in one
// REPEATABLE READ READ ONLY transaction, so all tables come from the same snapshot: the recovery point. Text COPY
// is the same on every PostgreSQL version, unlike a data directory (a 15 volume does not open in 16) or a
// pg_dump archive (whose pg_dump must match the server): the image needs no client tools, and the backup loads
// into any supported server (restore.ts).
import { createWriteStream, mkdirSync } from "node:fs";
import { join } from "node:path";
import { createGzip } from "node:zlib";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type postgres from "postgres";
import { tap } from "./files.ts";

/** Not backed up: the migrator's bookkeeping (restore re-creates it by migrating) and leases that expire anyway. */
export const TRANSIENT_TABLES = ["schema_migrations", "leader_leases"];
/**
 * Not backed up either: secrets the API makes again on demand, whose copy in a backup would outlive the promise
 * they were made under. A day key of the buyer statistics links that day's visitor hashes to addresses and must be
 * gone once its day is over (migration 0031): in a backup it would last as long as the backup (after a restore a
 * fresh key starts, so a visitor seen earlier that day may count once more). The preview-link secret signs links
 * to test records: after a restore a new one is made, and links issued before it (valid an hour by default) stop
 * working.
 */
export const SECRET_TABLES = ["listing_stats_day_keys", "preview_link_secret"];

export interface DumpedTable {
  name: string;
  /** The columns written, in order (generated columns are computed again on load). */
  columns: string[];
  rows: number;
  /** Relative to the backup directory. */
  file: string;
  bytes: number;
  sha256: string;
}

export interface DumpedSequence {
  name: string;
  /** bigint as text; null when never used. */
  value: string | null;
  isCalled: boolean;
}

export interface DatabaseDump {
  /** The snapshot's time (the transaction's start): nothing committed after it is in the backup. */
  snapshotAt: string;
  /** pg_current_snapshot() of the backup's transaction. */
  snapshot: string;
  serverVersion: string;
  /** The schema the rows fit: the migrations applied at the snapshot. */
  migrations: { version: string; name: string; checksum: string }[];
  tables: DumpedTable[];
  sequences: DumpedSequence[];
}

/** Every table of the current schema but the transient ones, with its columns, from the catalog. */
export async function backedUpTables(sql: postgres.Sql | postgres.TransactionSql) {
  return sql<{ name: string; columns: string[] }[]>`
    SELECT c.relname AS name,
           array_agg(a.attname::text ORDER BY a.attnum) AS columns
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
    WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname <> ALL (${[...TRANSIENT_TABLES, ...SECRET_TABLES]})
    GROUP BY c.relname
    ORDER BY c.relname`;
}

export async function dumpDatabase(
  sql: postgres.Sql,
  dir: string,
  opts: { onTable?: (table: DumpedTable) => void } = {},
): Promise<DatabaseDump> {
  mkdirSync(join(dir, "database"), { recursive: true, mode: 0o700 });
  return sql.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY", async (tx) => {
    // The first statement fixes the snapshot; everything below reads it.
    const [[point], migrations] = [
      await tx<{ at: Date; snapshot: string; version: string }[]>`
      SELECT now() AS at, pg_current_snapshot()::text AS snapshot, current_setting('server_version') AS version`,
      await tx<DatabaseDump["migrations"]>`SELECT version, name, checksum FROM schema_migrations ORDER BY version`,
    ];
    if (!point) throw new Error("no snapshot");
    const tables: DumpedTable[] = [];
    for (const { name, columns } of await backedUpTables(tx)) {
      const file = `database/${name}.copy.gz`;
      const raw = tap();
      const gz = tap();
      const source = await tx`COPY ${tx(name)} (${tx(columns)}) TO STDOUT`.readable();
      await pipeline(source, raw, createGzip(), gz, createWriteStream(join(dir, file), { mode: 0o600 }));
      // postgres.js 3.4.9 pauses the socket when the stream's buffer is full and resumes it only from the stream's
      // read(), which is never called again once the COPY's end is queued: the connection would wait forever
      // for the rest of the protocol (a table large enough to fill the buffer hung the backup). Resume it.
      (source as Readable)._read(0);
      const table = { name, columns, rows: raw.newlines, file, bytes: gz.bytes, sha256: gz.sha256() };
      tables.push(table);
      opts.onTable?.(table);
    }
    // Sequences are not transactional: read after the snapshot, each is at least what the snapshot's rows used.
    const sequences = await tx<{ name: string; value: string | null; isCalled: boolean }[]>`
      SELECT s.sequencename AS name, s.last_value::text AS value, s.last_value IS NOT NULL AS "isCalled"
      FROM pg_sequences s WHERE s.schemaname = current_schema() ORDER BY s.sequencename`;
    return {
      snapshotAt: point.at.toISOString(),
      snapshot: point.snapshot,
      serverVersion: point.version,
      migrations: [...migrations],
      tables,
      sequences: [...sequences],
    };
  });
}
