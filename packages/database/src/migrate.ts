// Versioned SQL migrations: files NNNN_name.sql applied in order, each in its own transaction, recorded
// with a checksum. A session advisory lock serialises concurrent runs (several services booting at once).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";

export const MIGRATIONS_DIR = join(import.meta.dir, "..", "migrations");
const LOCK_ID = 727_001; // arbitrary, constant: identifies "schema migration" among advisory locks

export interface Migration {
  version: string;
  name: string;
  sql: string;
  checksum: string;
}

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((file) => {
      const sql = readFileSync(join(dir, file), "utf8");
      return {
        version: file.slice(0, 4),
        name: file.slice(5, -4),
        sql,
        checksum: new Bun.CryptoHasher("sha256").update(sql).digest("hex"),
      };
    });
}

export class MigrationError extends Error {}

/** Applies pending migrations; returns the versions applied by this call. */
export async function migrate(sql: postgres.Sql, migrations = loadMigrations()): Promise<string[]> {
  const conn = await sql.reserve();
  try {
    await conn`SELECT pg_advisory_lock(${LOCK_ID})`;
    await conn`
      CREATE TABLE IF NOT EXISTS schema_migrations (
        version text PRIMARY KEY,
        name text NOT NULL,
        checksum text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`;
    const applied = new Map((await conn<{ version: string; checksum: string }[]>`SELECT version, checksum FROM schema_migrations`).map((r) => [r.version, r.checksum]));
    const done: string[] = [];
    for (const m of migrations) {
      const known = applied.get(m.version);
      if (known !== undefined) {
        if (known !== m.checksum) throw new MigrationError(`migration ${m.version}_${m.name} was changed after it was applied; add a new migration instead`);
        continue;
      }
      // A reserved connection has no begin(): drive the transaction by hand.
      await conn`BEGIN`;
      try {
        await conn.unsafe(m.sql);
        await conn`INSERT INTO schema_migrations (version, name, checksum) VALUES (${m.version}, ${m.name}, ${m.checksum})`;
        await conn`COMMIT`;
      } catch (err) {
        await conn`ROLLBACK`;
        throw new MigrationError(`migration ${m.version}_${m.name} failed: ${(err as Error).message}`);
      }
      done.push(m.version);
    }
    return done;
  } finally {
    await conn`SELECT pg_advisory_unlock(${LOCK_ID})`.catch(() => {});
    conn.release();
  }
}

/**
 * What both migration commands do (the image's migrate-main.ts, the local `npm run migrate`): apply pending
 * migrations to `url`, say what was applied on stderr, and close. False (after saying why) when it failed; driver
 * messages name host and database, never the password.
 */
export async function migrateDatabase(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const applied = await migrate(sql);
    console.error(applied.length ? `migrate: applied ${applied.join(", ")}` : "migrate: schema up to date");
    return true;
  } catch (err) {
    console.error(`migrate: ${(err as Error).message}`);
    return false;
  } finally {
    await sql.end({ timeout: 5 });
  }
}
