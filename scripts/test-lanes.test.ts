import { expect, test } from "bun:test";
import postgres from "postgres";
import { testUrls } from "../test/support/env.ts";
import { ensureLaneDatabases, laneDatabaseUrl, runPlan } from "./test-lanes.ts";

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

test("the lanes' databases are made when missing and kept for the next run", async () => {
  const base = testUrls().DATABASE_URL;
  const urls = await ensureLaneDatabases(base, 3);
  expect(urls).toEqual([base, laneDatabaseUrl(base, 2), laneDatabaseUrl(base, 3)]);
  expect(await ensureLaneDatabases(base, 3)).toEqual(urls);
  for (const url of urls) {
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const [row] = await sql`SELECT current_database() AS name`;
      expect(`/${row!.name}`).toBe(decodeURIComponent(new URL(url).pathname));
    } finally {
      await sql.end();
    }
  }
});
