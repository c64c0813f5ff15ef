// The Helm chart's init containers (packages/database/src/wait-main.ts): a service pod starts only once its image's
// migrations are applied; the migration Job starts once the database answers.
import { afterAll, expect, test } from "bun:test";
import postgres from "postgres";
import { loadMigrations } from "../src/migrate.ts";
import { pendingMigrations, waitForDatabase } from "../src/wait.ts";

const url = process.env.DATABASE_URL!;
const sql = postgres(url, { max: 1, onnotice: () => {} });
afterAll(() => sql.end());

test("a migrated database has no pending migration; one the image has and the database lacks is pending", async () => {
  const migrations = loadMigrations();
  expect(await pendingMigrations(sql, migrations)).toEqual([]);
  const future = { version: "9999", name: "not_yet", sql: "SELECT 1", checksum: "x" };
  expect(await pendingMigrations(sql, [...migrations, future])).toEqual(["9999"]);
});

test("waiting for the schema ends at once when it is current, and waiting for an unreachable database gives up at its deadline", async () => {
  const lines: string[] = [];
  const t0 = Date.now();
  expect(await waitForDatabase(url, "schema", { timeoutMs: 5_000, log: (l) => lines.push(l) })).toBe(true);
  expect(Date.now() - t0).toBeLessThan(3_000);
  expect(lines).toEqual([]);

  const nowhere = new URL(url);
  nowhere.port = "1"; // nothing listens there
  const t1 = Date.now();
  expect(
    await waitForDatabase(nowhere.toString(), "database", { timeoutMs: 1_500, pollMs: 200, log: (l) => lines.push(l) }),
  ).toBe(false);
  expect(Date.now() - t1).toBeGreaterThanOrEqual(1_500);
  expect(Date.now() - t1).toBeLessThan(10_000);
  // The same reason is said once, not at every poll.
  expect(lines.length).toBe(1);
  expect(lines[0]).toContain("the database does not answer");
});
