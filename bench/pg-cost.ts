// Diagnostic (issue 43, not a benchmark row): the PostgreSQL CPU and WAL of one single PUT, step by step, measured so
// that the machine's load does not enter the figure: each step runs on ONE backend, its CPU read from that backend's
// /proc/<pid>/schedstat (nanoseconds on a CPU, nothing of the time it waited), its WAL from pg_walinspect (the
// records of this database's relations and of the transactions that wrote them).
// - the API (one process, one database connection, relay off) takes N PUTs one at a time: its backend's CPU and
//   WAL per PUT, and the API process's own CPU per PUT (all its threads);
// - then the outbox relay's statements (the read and the delete of a round; Kafka is not called) and the feed
//   sequencer's pass run on a connection of their own over those N events, in rounds of ROUND rows: CPU and WAL per
//   event and per step;
// - the fair client's same work (bench/lib/fair-baseline.ts) on a connection of its own, N one at a time.
//   N=400 ROUND=20 MODES=create,update bun bench/pg-cost.ts
import { readdirSync, readFileSync } from "node:fs";
import postgres from "postgres";
import { createFeedSequencer, silentLogger } from "@pss/service-kit";
import { createBenchContext } from "./lib/context.ts";
import { externalId, listingBody } from "./lib/bodies.mjs";
import { createOnce, updateOnce } from "./lib/fair-baseline.ts";
import { startApiOnly } from "./lib/processes.ts";
import { markSentRows, readPendingRows } from "../services/api/src/outbox/outbox-relay.ts";

const N = Number(process.env.N ?? 400);
/** PUTs in flight at once (1: one at a time; more: the API writes them in groups, listing-write-groups.ts). */
const C = Number(process.env.C ?? 1);
const ROUND = Number(process.env.ROUND ?? 20);
const MODES = (process.env.MODES ?? "create,update").split(",") as ("create" | "update")[];
const ctx = await createBenchContext({ durationSeconds: 1, warmupSeconds: 0 });
const { sql } = ctx;
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
await sql`CREATE EXTENSION IF NOT EXISTS pg_walinspect`;
const slotHolder = await sql.reserve();
await slotHolder`SELECT pg_create_physical_replication_slot(${`pgcost_${process.pid}`}, true, true)`;
const [{ oid: dbOid }] =
  (await sql`SELECT oid::text FROM pg_database WHERE datname = current_database()`) as unknown as [{ oid: string }];

/** Nanoseconds a process's threads have been on a CPU (schedstat of every thread). */
function cpuNs(pid: number): number {
  let ns = 0;
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, "utf8").split(" ")[0]);
    } catch {}
  }
  return ns;
}
/** The WAL position everything before now has reached, flushed (pg_walinspect reads only flushed WAL): a tiny
 * transaction of this connection's own commits first (no record of this database's relations, so not counted). */
const lsn = async () => {
  await sql`SELECT pg_current_xact_id()`;
  return (await sql`SELECT pg_current_wal_flush_lsn()::text AS l`)[0]!.l as string;
};
/** WAL bytes (and records, full-page images) of this database between two LSNs. */
async function walByType(from: string, to: string) {
  return sql`
    WITH r AS (SELECT * FROM pg_get_wal_records_info(${from}::pg_lsn, ${to}::pg_lsn)),
    mine AS (SELECT DISTINCT xid FROM r WHERE block_ref LIKE ${`%/${dbOid}/%`} AND xid <> 0)
    SELECT resource_manager || '/' || split_part(record_type, ' ', 1) AS type, count(*)::int AS n,
           sum(record_length)::float8 AS bytes, sum(fpi_length)::float8 AS fpi
    FROM r WHERE block_ref LIKE ${`%/${dbOid}/%`} OR xid IN (SELECT xid FROM mine)
    GROUP BY 1 ORDER BY 3 DESC LIMIT 10`;
}
async function walOf(from: string, to: string) {
  const [row] = await sql`
    WITH r AS (SELECT * FROM pg_get_wal_records_info(${from}::pg_lsn, ${to}::pg_lsn)),
    mine AS (SELECT DISTINCT xid FROM r WHERE block_ref LIKE ${`%/${dbOid}/%`} AND xid <> 0)
    SELECT coalesce(sum(record_length), 0)::float8 AS bytes, count(*)::int AS n, coalesce(sum(fpi_length), 0)::float8 AS fpi
    FROM r WHERE block_ref LIKE ${`%/${dbOid}/%`} OR xid IN (SELECT xid FROM mine)`;
  return row as unknown as { bytes: number; n: number; fpi: number };
}
async function backendPid(client: postgres.Sql): Promise<number> {
  const [row] = await client`SELECT pg_backend_pid() AS pid`;
  return Number(row!.pid);
}

interface Step {
  cpuUs: number;
  walB: number;
  records: number;
  fpiB: number;
}
const results = new Map<string, Step>();
async function measure(
  label: string,
  pids: Record<string, number>,
  per: number,
  work: () => Promise<void>,
  checkpoint = false,
) {
  // A checkpoint before each request path (so each starts with the same full-page-image cost), none before the
  // relay's and sequencer's steps: as in a real phase, the pages the requests just wrote are not logged again.
  if (checkpoint) await sql`CHECKPOINT`;
  const c0 = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, cpuNs(p)]));
  const from = await lsn();
  await work();
  const to = await lsn();
  const wal = await walOf(from, to);
  const types = process.env.WAL_TYPES === "1" ? await walByType(from, to) : [];
  const cpu = Object.entries(pids).map(([k, p]) => `${k} ${((cpuNs(p) - c0[k]!) / 1000 / per).toFixed(0)} µs`);
  const waitedFor = Object.keys(pids).filter((k) => k.startsWith("backend")).length;
  if (waitedFor > 1) cpu.unshift(`backends together`);
  const backendNs = Object.entries(pids)
    .filter(([k]) => k.startsWith("backend"))
    .reduce((sum, [k, p]) => sum + cpuNs(p) - c0[k]!, 0);
  results.set(label, {
    cpuUs: backendNs / 1000 / per,
    walB: wal.bytes / per,
    records: wal.n / per,
    fpiB: wal.fpi / per,
  });
  console.log(
    `${label.padEnd(34)} CPU per event: ${cpu.join(", ")}; WAL ${(wal.bytes / per).toFixed(0)} B (${(wal.n / per).toFixed(1)} records, full-page images ${(wal.fpi / per).toFixed(0)} B)`,
  );
  for (const t of types)
    console.log(
      `      ${String(t.type).padEnd(26)} ${(t.n / per).toFixed(2).padStart(6)} records ${(t.bytes / per).toFixed(0).padStart(6)} B (images ${(t.fpi / per).toFixed(0)} B)`,
    );
}

const prefix = `pgcost-${Date.now().toString(36)}`;
const fair = postgres(ctx.urls.DATABASE_URL, { max: 1, onnotice: () => {}, connection: { application_name: "fair" } });
const relaySql = postgres(ctx.urls.DATABASE_URL, {
  max: 1,
  onnotice: () => {},
  connection: { application_name: "pss-outbox-relay", plan_cache_mode: "force_generic_plan" },
});
const api = await startApiOnly({
  ...ctx.urls,
  DATABASE_POOL_SIZE: C > 1 ? "4" : "1",
  OUTBOX_RELAY_ENABLED: "false",
});
console.log(`load ${load()}; N ${N}, ${C} in flight; relay rounds of ${ROUND}`);
try {
  const put = async (i: number, asking: number) => {
    const body = listingBody(ctx.brokerExternalId, i);
    body.financials.askingPrice = asking;
    const res = await fetch(`${api.url}/partner/v1/listings/${externalId(`${prefix}-api`, i)}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${ctx.partner.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    await res.arrayBuffer();
    if (res.status >= 300) throw new Error(`PUT ${res.status}`);
  };
  await Promise.all(
    Array.from({ length: 8 }, (_, w) =>
      (async () => {
        for (let i = w; i < 40; i += 8) await put(1_000_000 + i, 1);
      })(),
    ),
  );
  const apiBackends = (
    await sql`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'pss-api'`
  ).map((r) => Number(r.pid));
  const relayBackend = await backendPid(relaySql);
  const sequencer = createFeedSequencer({ sql: relaySql, logger: silentLogger }, { retentionDays: 35 });
  const drain = async () => {
    for (;;) {
      const rows = await readPendingRows(relaySql, { batchSize: ROUND, maxBatchBytes: 1 << 30 });
      if (rows.length === 0) break;
      await markSentRows(relaySql, rows, 0);
    }
    while ((await sequencer.runOnce()) > 0) {}
  };
  await drain();
  for (const mode of MODES) {
    await measure(
      `API ${mode}s (request path)`,
      { ...Object.fromEntries(apiBackends.map((p, k) => [`backend${k}`, p])), api: api.pid },
      N,
      () =>
        Promise.all(
          Array.from({ length: C }, (_, w) =>
            (async () => {
              for (let i = w; i < N; i += C) await put(i, mode === "create" ? 1 : 2);
            })(),
          ),
        ).then(() => {}),
      true,
    );
    let readNs = 0;
    let deleteNs = 0;
    await measure(`relay ${mode}s (read + delete)`, { backend0: relayBackend }, N, async () => {
      for (;;) {
        const c0 = cpuNs(relayBackend);
        const rows = await readPendingRows(relaySql, { batchSize: ROUND, maxBatchBytes: 1 << 30 });
        const c1 = cpuNs(relayBackend);
        readNs += c1 - c0;
        if (rows.length === 0) break;
        await markSentRows(relaySql, rows, 0);
        deleteNs += cpuNs(relayBackend) - c1;
      }
    });
    console.log(
      `  of which the reads ${(readNs / 1000 / N).toFixed(0)} µs, the deletes ${(deleteNs / 1000 / N).toFixed(0)} µs per event`,
    );
    await measure(`sequencer ${mode}s (rounds of ${ROUND})`, { backend0: relayBackend }, N, async () => {
      for (;;) {
        const [{ n }] = (await relaySql`SELECT count(*)::int AS n FROM feed_drafts`) as unknown as [{ n: number }];
        if (n === 0) break;
        // A pass of at most ROUND drafts, as the sequencer does when writes come at this pace.
        const s = createFeedSequencer({ sql: relaySql, logger: silentLogger }, { retentionDays: 35, batchSize: ROUND });
        if ((await s.runOnce()) === 0) break;
      }
    });
    const fairPid = await backendPid(fair);
    await measure(
      `fair ${mode}s`,
      { backend0: fairPid },
      N,
      async () => {
        for (let i = 0; i < N; i++) {
          if (mode === "create")
            await createOnce(fair, {
              partnerId: ctx.partner.partnerId,
              brokerExternalId: ctx.brokerExternalId,
              key: externalId(`${prefix}-fair`, i),
              body: listingBody(ctx.brokerExternalId, i),
            });
          else
            await updateOnce(fair, {
              partnerId: ctx.partner.partnerId,
              key: externalId(`${prefix}-fair`, i),
              brokerExternalId: ctx.brokerExternalId,
              mutate: (b) => void (b.financials.askingPrice = 2),
            });
        }
      },
      true,
    );
    await sql`DELETE FROM outbox WHERE topic = 'bench.baseline'`;
    const a = results.get(`API ${mode}s (request path)`)!;
    const r = results.get(`relay ${mode}s (read + delete)`)!;
    const s = results.get(`sequencer ${mode}s (rounds of ${ROUND})`)!;
    const f = results.get(`fair ${mode}s`)!;
    console.log(
      `  ${mode}s: PostgreSQL CPU per event API ${a.cpuUs.toFixed(0)} + relay ${r.cpuUs.toFixed(0)} + sequencer ${s.cpuUs.toFixed(0)} = ${(a.cpuUs + r.cpuUs + s.cpuUs).toFixed(0)} µs against fair ${f.cpuUs.toFixed(0)} µs (${((a.cpuUs + r.cpuUs + s.cpuUs) / f.cpuUs).toFixed(2)}×); WAL ${(a.walB + r.walB + s.walB).toFixed(0)} B against ${f.walB.toFixed(0)} B (${((a.walB + r.walB + s.walB) / f.walB).toFixed(2)}×; without full-page images ${((a.walB - a.fpiB + r.walB - r.fpiB + s.walB - s.fpiB) / (f.walB - f.fpiB)).toFixed(2)}×)`,
    );
  }
} finally {
  await api.stop();
  await fair.end();
  await relaySql.end();
  slotHolder.release();
  await ctx.close();
}
process.exit(0);
