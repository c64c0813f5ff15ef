import { afterAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { loadMigrations, migrate } from "@pss/database";
import { testUrls } from "../support/env.ts";

const sql = postgres(testUrls().DATABASE_URL, { max: 2, onnotice: () => {} });
afterAll(() => sql.end());

describe("PostgreSQL", () => {
  test("every migration is recorded with its checksum and the schema answers queries", async () => {
    const recorded = await sql<
      { version: string; checksum: string }[]
    >`SELECT version, checksum FROM schema_migrations ORDER BY version`;
    expect(recorded.map((r) => r.version)).toEqual(loadMigrations().map((m) => m.version));
    expect(recorded.map((r) => r.checksum)).toEqual(loadMigrations().map((m) => m.checksum));
    const [partner] = await sql<
      { id: string; name: string }[]
    >`INSERT INTO partners (name) VALUES ('plumbing test') RETURNING id, name`;
    const [found] = await sql<{ name: string }[]>`SELECT name FROM partners WHERE id = ${partner!.id}`;
    expect(found!.name).toBe("plumbing test");
  });

  test("running migrate again applies nothing", async () => {
    expect(await migrate(sql)).toEqual([]);
  });

  test("a migration whose file changed after it was applied is refused", async () => {
    const changed = loadMigrations().map((m, i) => (i === 0 ? { ...m, checksum: "tampered" } : m));
    await expect(migrate(sql, changed)).rejects.toThrow(/was changed after it was applied/);
  });
});
