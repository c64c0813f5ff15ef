// A rolling upgrade migrates while the running release writes (docs/upgrades.md): a migration whose transaction
// PostgreSQL chose as a deadlock's victim is applied again, once, instead of failing the upgrade; a migration that
// fails for any other reason fails at once. Each test runs in a database of its own.
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { migrate, MigrationError, type Migration } from "../src/migrate.ts";

const server = new URL(process.env.DATABASE_URL!);
const name = `${server.pathname.slice(1)}_migrate_${Math.random().toString(36).slice(2, 8)}`;
const admin = postgres(Object.assign(new URL(server), { pathname: "/postgres" }).toString(), {
  max: 1,
  onnotice: () => {},
});
let sql: postgres.Sql;

const migration = (version: string, body: string): Migration => ({
  version,
  name: `m${version}`,
  sql: body,
  checksum: new Bun.CryptoHasher("sha256").update(body).digest("hex"),
});

beforeAll(async () => {
  await admin.unsafe(`CREATE DATABASE "${name}"`);
  sql = postgres(Object.assign(new URL(server), { pathname: `/${name}` }).toString(), { max: 4, onnotice: () => {} });
});

afterAll(async () => {
  await sql.end({ timeout: 5 });
  await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.end({ timeout: 5 });
});

test("a migration chosen as a deadlock's victim by a writer's transaction is applied again and recorded once", async () => {
  expect(
    await migrate(sql, [
      migration("0001", "CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL); INSERT INTO t VALUES (1, 0), (2, 0);"),
    ]),
  ).toEqual(["0001"]);
  const deadlocks = async () =>
    Number((await sql`SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`)[0]!.deadlocks);
  const before = await deadlocks();

  // The writer holds row 2, then asks for row 1; the migration holds row 1 and waits for row 2 from before that,
  // so its deadlock check runs first and it is the victim (as 0029 was, against the previous release's sequencer).
  let writerHolds!: () => void;
  const holding = new Promise<void>((resolve) => (writerHolds = resolve));
  const writer = sql.begin(async (tx) => {
    await tx`UPDATE t SET v = v + 10 WHERE id = 2`;
    writerHolds();
    await Bun.sleep(300);
    await tx`UPDATE t SET v = v + 10 WHERE id = 1`;
  });
  await holding;
  const applied = await migrate(sql, [
    migration("0001", "CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL); INSERT INTO t VALUES (1, 0), (2, 0);"),
    migration("0002", "UPDATE t SET v = v + 1 WHERE id = 1; UPDATE t SET v = v + 1 WHERE id = 2;"),
  ]);
  await writer;

  expect(applied).toEqual(["0002"]);
  expect(await deadlocks()).toBe(before + 1);
  // Both applied exactly once: the writer's +10 and the migration's +1 on each row.
  expect((await sql`SELECT id, v FROM t ORDER BY id`).map((r) => [r.id, r.v])).toEqual([
    [1, 11],
    [2, 11],
  ]);
  expect((await sql`SELECT version FROM schema_migrations ORDER BY version`).map((r) => r.version)).toEqual([
    "0001",
    "0002",
  ]);
}, 30_000);

test("a migration that fails for another reason fails at once, naming itself, and is not recorded", async () => {
  const t0 = performance.now();
  const err = await migrate(sql, [migration("0003", "ALTER TABLE no_such_table ADD COLUMN x int;")]).catch((e) => e);
  expect(err).toBeInstanceOf(MigrationError);
  expect(err.message).toBe('migration 0003_m0003 failed: relation "no_such_table" does not exist');
  expect(performance.now() - t0).toBeLessThan(2_000);
  expect((await sql`SELECT count(*)::int AS n FROM schema_migrations WHERE version = '0003'`)[0]!.n).toBe(0);
});
