// The shared SQL fragments against the real PostgreSQL (test/queries/listing-with-broker.test.ts runs them through
// both services' reads).
import { afterAll, expect, test } from "bun:test";
import postgres from "postgres";
import { isoTimestamp, listedAt } from "../src/queries/index.ts";

const sql = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
afterAll(() => sql.end());

test("isoTimestamp gives ISO 8601 in UTC with milliseconds, whatever the session's time zone, early years included", async () => {
  await sql`SET TIME ZONE 'America/Chicago'`;
  const [r] = await sql`
    SELECT ${isoTimestamp(sql, "t.a")} AS a, ${isoTimestamp(sql, "t.b")} AS b, ${isoTimestamp(sql, "t.c")} AS c
    FROM (SELECT '2026-11-22 14:30:15.1234-06'::timestamptz AS a, '0018-03-01 00:00:00+00'::timestamptz AS b, NULL::timestamptz AS c) t`;
  expect(r).toEqual({ a: "2026-11-22T20:30:15.123Z", b: "0018-03-01T00:00:00.000Z", c: null });
});

test("listedAt falls back to the listing's creation when its status history has no move into a visible status", async () => {
  const [r] = await sql`
    SELECT ${listedAt(sql, "x")} AS listed_at
    FROM (SELECT -1::bigint AS id, '2026-01-02 03:04:05+00'::timestamptz AS created_at) x`;
  expect((r!.listed_at as Date).toISOString()).toBe("2026-01-02T03:04:05.000Z");
});
