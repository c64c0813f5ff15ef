// The database part of `admin backup` / `admin restore` against the real PostgreSQL, with tables larger than a
// stream buffer (the drill in services/api/test/backup-restore.test.ts runs the whole thing through the CLI).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { migrate } from "../src/migrate.ts";
import { BackupError, dumpDatabase, restoreDatabase } from "../src/backup/index.ts";

const url = (name: string) => {
  const u = new URL(process.env.DATABASE_URL!);
  u.pathname = `/${name}`;
  return u.toString();
};
const base = `${new URL(process.env.DATABASE_URL!).pathname.slice(1)}_dump_${Math.random().toString(36).slice(2, 8)}`;
const server = postgres(url("postgres"), { max: 1, onnotice: () => {} });
const dir = mkdtempSync(join(tmpdir(), "pss-dump-"));
let source: postgres.Sql;
let target: postgres.Sql;

beforeAll(async () => {
  await server.unsafe(`CREATE DATABASE "${base}_src"`);
  await server.unsafe(`CREATE DATABASE "${base}_dst"`);
  source = postgres(url(`${base}_src`), { max: 2, onnotice: () => {} });
  target = postgres(url(`${base}_dst`), { max: 2, onnotice: () => {} });
  await migrate(source);
});

afterAll(async () => {
  await source?.end({ timeout: 1 });
  await target?.end({ timeout: 1 });
  for (const db of [`${base}_src`, `${base}_dst`]) await server.unsafe(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
  await server.end();
  rmSync(dir, { recursive: true, force: true });
});

const digest = async (sql: postgres.Sql) =>
  (await sql`SELECT count(*)::int AS n, md5(string_agg(o::text, E'\n' ORDER BY o.id)) AS md5 FROM outbox o`)[0];

test("a table of megabytes (more than a stream buffer holds) is dumped and restored identically, and its sequence continues", async () => {
  // 20,000 outbox rows of ~300 bytes: 6 MB of COPY text, far beyond the 16 KiB a stream buffers.
  await source`
    INSERT INTO outbox (topic, message_key, payload)
    SELECT 'pss.test.v1', 'key-' || g, jsonb_build_object('n', g, 'text', repeat(md5(g::text), 8), 'tab', E'a\tb\nc\\\\d')
    FROM generate_series(1, 20000) g`;
  const before = await digest(source);

  const dump = await Promise.race([
    dumpDatabase(source, dir),
    Bun.sleep(60_000).then(() => {
      throw new Error("the dump did not finish within 60 s");
    }),
  ]);
  const outbox = dump.tables.find((t) => t.name === "outbox");
  expect(outbox?.rows).toBe(20000);
  expect(dump.tables.map((t) => t.name)).not.toContain("schema_migrations");

  const restored = await restoreDatabase(target, dir, dump);
  expect(restored.tables.find((t) => t.name === "outbox")?.rows).toBe(20000);
  expect(await digest(target)).toEqual(before);
  const [next] = await target`INSERT INTO outbox (topic, message_key, payload) VALUES ('t', 'k', '{}') RETURNING id`;
  expect(Number(next!.id)).toBe(20001);
}, 120_000);

test("a table file swapped after its check and before its load is refused, and nothing is restored", async () => {
  // Two dumps of the same schema and row counts: in the second one row was changed (as an api_keys row's hash
  // swapped for the forger's would be), so only the file's bytes tell them apart.
  const [first, second] = [join(dir, "first"), join(dir, "second")];
  const dumped = await dumpDatabase(source, first);
  await source`UPDATE outbox SET message_key = 'forged' WHERE id = (SELECT min(id) FROM outbox)`;
  const other = await dumpDatabase(source, second);
  expect(other.tables.find((t) => t.name === "outbox")!.rows).toBe(
    dumped.tables.find((t) => t.name === "outbox")!.rows,
  );
  const outbox = dumped.tables.find((t) => t.name === "outbox")!;
  expect(other.tables.find((t) => t.name === "outbox")!.sha256).not.toBe(outbox.sha256);
  const fresh = `${base}_swap`;
  await server.unsafe(`CREATE DATABASE "${fresh}"`);
  const into = postgres(url(fresh), { max: 2, onnotice: () => {} });
  try {
    const failure = await restoreDatabase(into, first, dumped, {
      // Every file was checked against the manifest by now: the swap comes after it.
      beforeLoad: async () => copyFileSync(join(second, outbox.file), join(first, outbox.file)),
    }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(BackupError);
    expect((failure as Error).message).toContain(`backup file ${outbox.file} changed while it was restored`);
    // The load is one transaction: not a row of any table is there.
    const [row] = await into`SELECT (SELECT count(*) FROM outbox) + (SELECT count(*) FROM partners) AS n`;
    expect(Number(row?.n)).toBe(0);
  } finally {
    await into.end({ timeout: 1 });
    await server.unsafe(`DROP DATABASE IF EXISTS "${fresh}" WITH (FORCE)`);
  }
}, 120_000);
