import { expect, test } from "bun:test";
import postgres from "postgres";
import { testUrls } from "../test/support/env.ts";
import { ensureLaneDatabases, laneDatabaseUrl, laneSequenceFloor, runPlan } from "./test-lanes.ts";

test("lane 1 uses the run's own database, the others one named after it", () => {
  const base = "postgres://pss:pss@127.0.0.1:55432/pss_dev?sslmode=disable";
  expect(laneDatabaseUrl(base, 1)).toBe(base);
  expect(laneDatabaseUrl(base, 3)).toBe("postgres://pss:pss@127.0.0.1:55432/pss_dev_lane3?sslmode=disable");
});

test("at most width files at once; the alone ones after all others, one at a time, each knowing its lane", async () => {
  let running = 0;
  let most = 0;
  const events: string[] = [];
  const lanesSeen = new Set<number | null>();
  const concurrent = Array.from({ length: 9 }, (_, i) => `c${i}`);
  await runPlan(
    {
      concurrent,
      alone: [
        { file: "a1", reason: "r" },
        { file: "a2", reason: "r" },
      ],
    },
    3,
    async (file, lane) => {
      running++;
      most = Math.max(most, running);
      lanesSeen.add(lane);
      events.push(`start ${file}`);
      if (lane === null) expect(running).toBe(1);
      await Bun.sleep(file.startsWith("c") ? 5 + (Number(file.slice(1)) % 3) * 10 : 5);
      events.push(`end ${file}`);
      running--;
    },
  );
  expect(most).toBe(3);
  expect([...lanesSeen].sort()).toEqual([1, 2, 3, null]);
  const firstAlone = events.indexOf("start a1");
  for (const file of concurrent) expect(events.indexOf(`end ${file}`)).toBeLessThan(firstAlone);
  expect(events.slice(firstAlone)).toEqual(["start a1", "end a1", "start a2", "end a2"]);
});

test("lane n numbers its rows from its own range, within each sequence's type; lane 1 as it is", () => {
  expect(laneSequenceFloor(1, "bigint")).toBeNull();
  expect(laneSequenceFloor(2, "bigint")).toBe(1_000_000_000_000);
  expect(laneSequenceFloor(3, "integer")).toBe(400_000_000);
  expect(laneSequenceFloor(8, "integer")!).toBeLessThan(2_147_483_647 - 100_000_000);
  expect(laneSequenceFloor(8, "bigint")!).toBeLessThan(Number.MAX_SAFE_INTEGER);
  expect(laneSequenceFloor(2, "smallint")).toBeNull();
});

test("the lanes' databases are made, migrated and given their ranges, and a second run keeps them as they are", async () => {
  // A base database of this test's own, so the lanes it makes are its own too (dropped at the end).
  const server = postgres(testUrls().DATABASE_URL, { max: 1, onnotice: () => {} });
  const name = `lanes_${Math.random().toString(36).slice(2, 10)}`;
  const base = Object.assign(new URL(testUrls().DATABASE_URL), { pathname: `/${name}` }).toString();
  await server.unsafe(`CREATE DATABASE "${name}"`);
  try {
    const urls = await ensureLaneDatabases(base, 3);
    expect(urls).toEqual([base, laneDatabaseUrl(base, 2), laneDatabaseUrl(base, 3)]);
    const next = async (url: string, table: string) => {
      const sql = postgres(url, { max: 1, onnotice: () => {} });
      try {
        const [row] =
          await sql`SELECT current_database() AS db, nextval(pg_get_serial_sequence(${table}, 'id'))::text AS id`;
        return { db: row!.db as string, id: Number(row!.id) };
      } finally {
        await sql.end();
      }
    };
    const lane3 = await next(urls[2]!, "listings");
    expect(lane3.db).toBe(`${name}_lane3`);
    expect(lane3.id).toBe(2_000_000_000_001);
    expect((await next(urls[1]!, "offices")).id).toBe(200_000_001);
    // Kept, migrated and counting on where it was.
    expect(await ensureLaneDatabases(base, 3)).toEqual(urls);
    expect((await next(urls[2]!, "listings")).id).toBe(2_000_000_000_002);
  } finally {
    for (const db of [`${name}_lane3`, `${name}_lane2`, name])
      await server.unsafe(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
    await server.end();
  }
}, 120_000);
