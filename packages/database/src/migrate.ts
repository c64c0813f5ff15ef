// Versioned SQL migrations: files NNNN_name.sql applied in order, each in its own transaction, recorded
// with a checksum. A transaction-scoped advisory lock serialises concurrent runs (several services booting at once).
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

/**
 * Applies pending migrations; returns the versions applied by this call. Each step is one transaction holding a
 * transaction-scoped advisory lock, so concurrent runs serialise and nothing outlives a transaction: it works the
 * same through a transaction-pooling PgBouncer (a session lock would stay on whichever server connection took it).
 */
export async function migrate(sql: postgres.Sql, migrations = loadMigrations()): Promise<string[]> {
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${LOCK_ID})`;
    await tx`
      CREATE TABLE IF NOT EXISTS schema_migrations (
        version text PRIMARY KEY,
        name text NOT NULL,
        checksum text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`;
  });
  const done: string[] = [];
  for (const m of migrations) {
    const applied = await applyRetryingLockFailures(sql, m);
    if (applied) done.push(m.version);
  }
  return done;
}

/**
 * Lock failures a migration's transaction may meet while the running release writes (a rolling upgrade migrates
 * under traffic): chosen as a deadlock's victim when its ALTERs take tables in another order than a writer's
 * transaction (0029: the feed, then its heads; the previous release's sequencer: the heads, then the feed), or a
 * lock_timeout / serialization failure. The whole transaction rolled back, so trying it again is safe.
 */
const RETRYABLE_LOCK_FAILURES = new Set(["40P01", "55P03", "40001"]);
/** Attempts of one migration before its lock failure is reported. */
const MIGRATION_ATTEMPTS = 8;

async function applyRetryingLockFailures(sql: postgres.Sql, m: Migration): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await applyInTransaction(sql, m);
    } catch (err) {
      if (err instanceof MigrationError) throw err;
      const retryable = RETRYABLE_LOCK_FAILURES.has((err as { code?: string }).code ?? "");
      if (!retryable || attempt >= MIGRATION_ATTEMPTS)
        throw new MigrationError(
          `migration ${m.version}_${m.name} failed${attempt > 1 ? ` (attempt ${attempt})` : ""}: ${(err as Error).message}`,
        );
      // The writers it collided with finish meanwhile; a short, growing pause with jitter.
      await Bun.sleep(100 * attempt + Math.floor(Math.random() * 100));
    }
  }
}

function applyInTransaction(sql: postgres.Sql, m: Migration): Promise<boolean> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${LOCK_ID})`;
    // Read under the lock: another run may have applied it meanwhile.
    const [known] = await tx<
      { checksum: string }[]
    >`SELECT checksum FROM schema_migrations WHERE version = ${m.version}`;
    if (known) {
      if (known.checksum !== m.checksum)
        throw new MigrationError(
          `migration ${m.version}_${m.name} was changed after it was applied; add a new migration instead`,
        );
      return false;
    }
    await tx.unsafe(m.sql);
    await tx`INSERT INTO schema_migrations (version, name, checksum) VALUES (${m.version}, ${m.name}, ${m.checksum})`;
    return true;
  });
}

/**
 * A database to connect to: the URL and postgres.js's `ssl` option, as service-kit's postgresConnection() makes them
 * from DATABASE_URL's sslmode and DATABASE_TLS_*_FILE (the same TLS the services use).
 */
export interface DatabaseConnection {
  url: string;
  ssl?: postgres.Options<Record<string, postgres.PostgresType>>["ssl"];
}

/**
 * What both migration commands do (the image's migrate-main.ts, the local `npm run migrate`): apply pending
 * migrations to `url`, say what was applied on stderr, and close. False (after saying why) when it failed; driver
 * messages name host and database, never the password.
 */
export async function migrateDatabase(target: string | DatabaseConnection): Promise<boolean> {
  const { url, ssl } = typeof target === "string" ? { url: target, ssl: undefined } : target;
  // Unnamed statements: a one-shot command that also works through a transaction-pooling PgBouncer.
  const sql = postgres(url, { max: 1, prepare: false, onnotice: () => {}, ...(ssl !== undefined ? { ssl } : {}) });
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
