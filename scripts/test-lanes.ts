// Lanes for the main part of `npm test`: at most `width` test files at a time, each lane taking the next file as
// soon as its last one is done, and each lane on a PostgreSQL database of its own. A database holds singletons a
// file may rely on while it runs (the outbox relay's lease, the whole outbox a relay-less test expects to stay
// unpublished, the change feed's sequencer); Kafka, OpenSearch, Redis and S3 are shared as between engineers'
// runs, by unique names (docs/testing.md, "Staying isolated on shared servers").
//
// The lanes' databases number their rows in ranges of their own: events on the shared topics name records by
// these numbers (a listing's ID is its message key), and a consumer that reads every partner's events (a service
// process a test starts, an indexer without a partner filter) looks the number up in its own database. With the
// same numbers in two databases it would take another lane's event for one of its own records and index, delete
// or repair the wrong one; with ranges apart it finds nothing and leaves it.
import postgres from "postgres";
import { migrate } from "@pss/database";
import type { TestPlan } from "./test-plan.ts";

/** Where lane n's numbering starts, by the sequence's type: far above anything a test run makes, within the type. */
export function laneSequenceFloor(lane: number, dataType: string): number | null {
  if (lane <= 1) return null;
  if (dataType === "bigint") return (lane - 1) * 1_000_000_000_000;
  // Offices and organizations (integer IDs, also in API paths up to 2147483647): 8 lanes fit.
  if (dataType === "integer") return (lane - 1) * 200_000_000;
  return null;
}

/** Lane 1 uses the database of the URL itself; lane n > 1 `<database>_lane<n>`, made when missing. */
export function laneDatabaseUrl(baseUrl: string, lane: number): string {
  if (lane === 1) return baseUrl;
  const url = new URL(baseUrl);
  url.pathname = `/${decodeURIComponent(url.pathname.slice(1))}_lane${lane}`;
  return url.toString();
}

/**
 * The lanes' databases: made when missing, migrated, and each lane's sequences raised to its range
 * (laneSequenceFloor; never lowered, so a database kept from an earlier run keeps counting where it was).
 */
export async function ensureLaneDatabases(baseUrl: string, width: number): Promise<string[]> {
  const urls = Array.from({ length: width }, (_, i) => laneDatabaseUrl(baseUrl, i + 1));
  const server = postgres(baseUrl, { max: 1, onnotice: () => {} });
  try {
    for (const url of urls.slice(1)) {
      const name = decodeURIComponent(new URL(url).pathname.slice(1));
      const [exists] = await server`SELECT 1 FROM pg_database WHERE datname = ${name}`;
      if (exists) continue;
      // Another run on the same server may make it at the same moment: that is as good.
      await server.unsafe(`CREATE DATABASE "${name.replaceAll('"', '""')}"`).catch((err: { code?: string }) => {
        if (err.code !== "42P04" && err.code !== "23505") throw err;
      });
    }
  } finally {
    await server.end();
  }
  for (const [i, url] of urls.entries()) {
    if (i === 0) continue;
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await migrate(sql);
      const sequences = await sql<{ name: string; type: string; last: string | null }[]>`
        SELECT format('%I.%I', schemaname, sequencename) AS name, data_type::text AS type, last_value::text AS last
        FROM pg_sequences WHERE schemaname = current_schema()`;
      for (const s of sequences) {
        const floor = laneSequenceFloor(i + 1, s.type);
        if (floor !== null && (s.last === null || Number(s.last) < floor))
          await sql`SELECT setval(${s.name}::regclass, ${floor})`;
      }
    } finally {
      await sql.end();
    }
  }
  return urls;
}

/** Runs work(item, lane) for every item, at most width at once; lanes are numbered from 1. */
export async function inLanes<T>(
  items: readonly T[],
  width: number,
  work: (item: T, lane: number) => Promise<void>,
): Promise<void> {
  const queue = [...items];
  const lane = async (n: number) => {
    while (queue.length > 0) await work(queue.shift() as T, n);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(width, items.length)) }, (_, i) => lane(i + 1)));
}

/**
 * The plan's concurrent files in lanes (work gets the lane, from 1), then each file that must run alone, one after
 * another once every other file is done (work gets lane null: nothing else runs meanwhile).
 */
export async function runPlan(
  plan: TestPlan,
  width: number,
  work: (file: string, lane: number | null) => Promise<void>,
): Promise<void> {
  await inLanes(plan.concurrent, width, work);
  for (const { file } of plan.alone) await work(file, null);
}
