// Loads a logical backup (dump.ts) into an empty database: migrates it to the backup's schema, loads every table
// in foreign-key order in ONE transaction (a failure leaves no half-restored data), sets the sequences, then
// applies this release's later migrations, so an older backup is upgraded exactly as a live database would be.
import { createReadStream, existsSync } from "node:fs";
import { join } from "node:path";
import { createGunzip } from "node:zlib";
import { pipeline } from "node:stream/promises";
import type postgres from "postgres";
import { loadMigrations, migrate, type Migration } from "../migrate.ts";
import type { DatabaseDump } from "./dump.ts";
import { fileSha256, tap } from "./files.ts";
import { BackupError, loadOrder, type ForeignKey } from "./table-order.ts";

/**
 * The release's migrations that rebuild the backup's schema. Refused: a backup made by a newer release (a
 * migration this release does not have) or one whose migration differs from this release's file of that number.
 */
export function migrationsFor(dump: Pick<DatabaseDump, "migrations">, release: Migration[]): Migration[] {
  const byVersion = new Map(release.map((m) => [m.version, m]));
  const unknown = dump.migrations.filter((m) => !byVersion.has(m.version));
  if (unknown.length > 0)
    throw new BackupError(
      `the backup was made by a newer release: this one does not have migration ${unknown.map((m) => `${m.version}_${m.name}`).join(", ")}; restore with that release (or a later one)`,
    );
  const changed = dump.migrations.filter((m) => byVersion.get(m.version)?.checksum !== m.checksum);
  if (changed.length > 0)
    throw new BackupError(
      `migration ${changed.map((m) => `${m.version}_${m.name}`).join(", ")} of the backup differs from this release's: the backup comes from another code line`,
    );
  const wanted = new Set(dump.migrations.map((m) => m.version));
  return release.filter((m) => wanted.has(m.version));
}

/** Checks every table file against the manifest before anything is changed; the first damaged or missing file is named. */
export async function verifyDumpFiles(dir: string, dump: DatabaseDump): Promise<void> {
  for (const table of dump.tables) {
    const path = join(dir, table.file);
    if (!existsSync(path)) throw new BackupError(`backup file ${table.file} is missing`);
    const sha = await fileSha256(path);
    if (sha !== table.sha256)
      throw new BackupError(`backup file ${table.file} is damaged: its SHA-256 is not the one in manifest.json`);
  }
}

async function appliedMigrations(sql: postgres.Sql): Promise<string[]> {
  const [exists] = await sql<{ found: boolean }[]>`SELECT to_regclass('schema_migrations') IS NOT NULL AS found`;
  if (!exists?.found) return [];
  return (await sql<{ version: string }[]>`SELECT version FROM schema_migrations ORDER BY version`).map(
    (r) => r.version,
  );
}

/** Tables (of the given ones) holding rows. */
async function nonEmpty(sql: postgres.Sql | postgres.TransactionSql, tables: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const t of tables) {
    const [{ present } = { present: false }] = await sql<{ present: boolean }[]>`
      SELECT to_regclass(${t}) IS NOT NULL AS present`;
    if (!present) continue;
    const [row] = await sql`SELECT 1 FROM ${sql(t)} LIMIT 1`;
    if (row) found.push(t);
  }
  return found;
}

export interface RestoredDatabase {
  /** Migrations this release applied after loading (a backup from an older release). */
  upgradedWith: string[];
  tables: { name: string; rows: number }[];
}

export async function restoreDatabase(
  sql: postgres.Sql,
  dir: string,
  dump: DatabaseDump,
  opts: {
    release?: Migration[];
    onTable?: (name: string, rows: number) => void;
    /** Runs once the target and the files are checked, before the database is changed (the objects go back then). */
    beforeLoad?: () => Promise<void>;
  } = {},
): Promise<RestoredDatabase> {
  const release = opts.release ?? loadMigrations();
  const toBackup = migrationsFor(dump, release);
  const names = dump.tables.map((t) => t.name);
  const applied = await appliedMigrations(sql);
  const ahead = applied.filter((v) => !toBackup.some((m) => m.version === v));
  if (ahead.length > 0)
    throw new BackupError(
      `the target database has migrations the backup predates (${ahead.join(", ")}): restore into a new, empty database`,
    );
  const full = await nonEmpty(sql, names);
  if (full.length > 0)
    throw new BackupError(
      `the target database is not empty (${full.slice(0, 5).join(", ")}${full.length > 5 ? ", …" : ""} hold rows): restore only into a new, empty database`,
    );
  await verifyDumpFiles(dir, dump);
  await opts.beforeLoad?.();

  await migrate(sql, toBackup);
  const tables: RestoredDatabase["tables"] = [];
  await sql.begin(async (tx) => {
    // Checked again inside the transaction: a service started against this database meanwhile is refused too.
    const written = await nonEmpty(tx, names);
    if (written.length > 0) throw new BackupError(`the target database got rows meanwhile (${written.join(", ")})`);
    const keys = await tx<ForeignKey[]>`
      SELECT c.conrelid::regclass::text AS "from", c.confrelid::regclass::text AS "to"
      FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
      WHERE c.contype = 'f' AND n.nspname = current_schema()`;
    const byName = new Map(dump.tables.map((t) => [t.name, t]));
    for (const name of loadOrder(names, keys)) {
      const table = byName.get(name);
      if (!table) continue;
      const target = await tx`COPY ${tx(name)} (${tx(table.columns)}) FROM STDIN`.writable();
      // The bytes loaded are hashed as they pass: a file changed after verifyDumpFiles read it (between the check
      // and the load) fails here, before the commit, so what is restored is exactly what the manifest vouches for.
      const loaded = tap();
      await pipeline(createReadStream(join(dir, table.file)), loaded, createGunzip(), target);
      if (loaded.sha256() !== table.sha256)
        throw new BackupError(
          `backup file ${table.file} changed while it was restored: its SHA-256 is no longer the one in manifest.json; nothing was restored`,
        );
      const [{ n } = { n: -1 }] = await tx<{ n: number }[]>`SELECT count(*)::int AS n FROM ${tx(name)}`;
      if (n !== table.rows) throw new BackupError(`${table.file}: ${n} rows loaded, the manifest says ${table.rows}`);
      tables.push({ name, rows: n });
      opts.onTable?.(name, n);
    }
    for (const s of dump.sequences) {
      if (s.value === null) continue;
      await tx`SELECT setval(${s.name}::regclass, ${s.value}::bigint, ${s.isCalled})`;
    }
  });
  const upgradedWith = await migrate(sql, release);
  return { upgradedWith, tables };
}
