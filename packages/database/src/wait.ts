// What a Kubernetes pod waits for before it starts (deploy/helm: the migration Job's init container waits for the
// database, each service's for the schema), as compose's depends_on does: bounded, one line of progress at a time.
import postgres from "postgres";
import { loadMigrations, type DatabaseConnection, type Migration } from "./migrate.ts";

/** The versions of `migrations` the database has not applied (all of them before the first migration ran). */
export async function pendingMigrations(
  sql: postgres.Sql,
  migrations: Migration[] = loadMigrations(),
): Promise<string[]> {
  const [table] = await sql<{ name: string | null }[]>`SELECT to_regclass('schema_migrations')::text AS name`;
  if (!table?.name) return migrations.map((m) => m.version);
  const applied = new Set(
    (await sql<{ version: string }[]>`SELECT version FROM schema_migrations`).map((r) => r.version),
  );
  return migrations.filter((m) => !applied.has(m.version)).map((m) => m.version);
}

export type WaitTarget = "database" | "schema";

/**
 * Waits until the database answers ("database") or has applied every migration of this image ("schema"); true when
 * it did within `timeoutMs`. Connection errors are waited out, they are what this is for.
 */
export async function waitForDatabase(
  database: string | DatabaseConnection,
  target: WaitTarget,
  opts: { timeoutMs: number; pollMs?: number; log?: (line: string) => void },
): Promise<boolean> {
  const log = opts.log ?? ((line: string) => console.error(line));
  const deadline = Date.now() + opts.timeoutMs;
  const { url, ssl } = typeof database === "string" ? { url: database, ssl: undefined } : database;
  const sql = postgres(url, {
    max: 1,
    prepare: false,
    onnotice: () => {},
    connect_timeout: 5,
    ...(ssl !== undefined ? { ssl } : {}),
  });
  let said = "";
  try {
    for (;;) {
      let why: string;
      try {
        if (target === "database") {
          await sql`SELECT 1`;
          return true;
        }
        const pending = await pendingMigrations(sql);
        if (pending.length === 0) return true;
        why = `migrations ${pending[0]}${pending.length > 1 ? `..${pending.at(-1)}` : ""} not applied yet`;
      } catch (err) {
        why = `the database does not answer (${(err as Error).message})`;
      }
      if (why !== said) log(`wait: ${target}: ${why}`);
      said = why;
      if (Date.now() > deadline) return false;
      await Bun.sleep(opts.pollMs ?? 1000);
    }
  } finally {
    await sql.end({ timeout: 2 });
  }
}
