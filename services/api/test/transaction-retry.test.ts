// retryTransaction against a real deadlock: PostgreSQL aborts one of two transactions that lock the same two
// rows in opposite orders (SQLSTATE 40P01); the helper runs it again and both writes land.
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { testUrls } from "../../../test/support/env.ts";
import { retryTransaction } from "@pss/http-kit";

let sql: postgres.Sql;
const table = `retry_probe_${process.pid}_${Date.now()}`;

beforeAll(async () => {
  sql = postgres(testUrls().DATABASE_URL, { max: 4, onnotice: () => {} });
  await sql`CREATE TABLE ${sql(table)} (id int PRIMARY KEY, writes int NOT NULL DEFAULT 0)`;
  await sql`INSERT INTO ${sql(table)} (id) VALUES (1), (2)`;
});
afterAll(async () => {
  await sql`DROP TABLE IF EXISTS ${sql(table)}`;
  await sql.end({ timeout: 5 });
});

test("a real deadlock (40P01) is retried and both transactions commit", async () => {
  const retried: string[] = [];
  // Both have taken their first lock before either asks for its second: a deadlock for sure.
  let firstLocks = 0;
  let bothLocked!: () => void;
  const ready = new Promise<void>((resolve) => (bothLocked = resolve));
  const opposite = (first: number, second: number) =>
    retryTransaction(
      () =>
        sql.begin(async (tx) => {
          await tx`UPDATE ${sql(table)} SET writes = writes + 1 WHERE id = ${first}`;
          if (++firstLocks === 2) bothLocked();
          await ready;
          await tx`UPDATE ${sql(table)} SET writes = writes + 1 WHERE id = ${second}`;
        }),
      { onRetry: ({ code }) => void retried.push(code) },
    );
  await Promise.all([opposite(1, 2), opposite(2, 1)]);
  expect(retried).toEqual(["40P01"]);
  const rows = await sql`SELECT id, writes FROM ${sql(table)} ORDER BY id`;
  // Two committed transactions, each writing both rows once; the aborted attempt left nothing.
  expect(rows.map((r) => r.writes)).toEqual([2, 2]);
}, 20_000);
