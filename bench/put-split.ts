// Diagnostic (issue 43, not a benchmark row): where the CPU of a saturated single PUT goes, by process, against the
// fair client's same work, per row written: the API process, the relay process (relay + feed sequencer), this
// database's PostgreSQL backends by application (the API's, the relay's, the fair client's), the Kafka broker, and
// the rest of the machine (the load generator, other users), from /proc; plus the machine's idle share and what
// the API's backends waited on (pg_stat_activity, every 50 ms). CPU per row is far steadier on a shared machine
// than rows per second.
//   D=10 MODES=create,update FAIR=1 bun bench/put-split.ts
import { readFileSync } from "node:fs";
import { createBenchContext } from "./lib/context.ts";
import { cpuSecondsOf } from "./lib/cpu-meter.ts";
import { fairBaseline, removeBaselineRows } from "./lib/fair-baseline.ts";
import { runLoad, runOpenLoop, startApiProcess } from "./lib/processes.ts";
import { sampleWaits } from "./lib/open-loop-conditions.ts";
import { beginPhase, quiesce } from "./lib/write-phase.ts";

const D = Number(process.env.D ?? 10);
const MODES = (process.env.MODES ?? "create,update").split(",") as ("create" | "update")[];
const ctx = await createBenchContext({ durationSeconds: D, warmupSeconds: 2 });
const prefix = `split-${Date.now().toString(36)}`;
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

/** The Kafka broker's PID (the java process listening on the broker's port), for its CPU per row. */
function kafkaPid(): number | null {
  const port = Number((ctx.urls.KAFKA_BROKERS ?? "").split(",")[0]?.split(":")[1] ?? 0);
  const out = Bun.spawnSync(["ss", "-ltnpH", `sport = :${port}`]).stdout.toString();
  const m = /pid=(\d+)/.exec(out);
  return m ? Number(m[1]) : null;
}
/** Busy and total CPU seconds of the whole machine (/proc/stat). */
function machine(): { busy: number; total: number } {
  const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0) / 100;
  const idle = (f[3]! + f[4]!) / 100;
  return { busy: total - idle, total };
}
const kafka = kafkaPid();
/** CPU seconds of this process's children that ended and were reaped (the load generator, once it exits). */
function reapedChildren(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[13]) + Number(f[14])) / 100;
}

/** With PGSS=1 (a server with pg_stat_statements loaded): the statements of a measurement, per row written. */
const pgss = process.env.PGSS === "1";
async function statements(rows: number): Promise<void> {
  const top = await ctx.sql`
    SELECT calls::int, rows::int, total_exec_time::float8 AS ms, wal_bytes::float8 AS wal,
           left(regexp_replace(query, '\s+', ' ', 'g'), 90) AS q
    FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
    ORDER BY total_exec_time DESC LIMIT 14`;
  for (const t of top)
    console.log(
      `    ${((t.ms * 1000) / rows).toFixed(0).padStart(5)} µs/row ${(t.calls / rows).toFixed(3).padStart(7)} calls/row ${String(Math.round(t.wal / rows)).padStart(6)} B WAL/row  ${t.q}`,
    );
}

async function split(label: string, procs: Record<string, number>, run: () => Promise<number>) {
  const all = { ...procs, ...(kafka ? { kafka } : {}) };
  if (pgss) await ctx.sql`SELECT pg_stat_statements_reset()`;
  const m0 = machine();
  const children0 = reapedChildren();
  const c0 = Object.fromEntries(Object.entries(all).map(([k, pid]) => [k, cpuSecondsOf(pid)]));
  const pg0 = await pgCpu();
  const waits = sampleWaits(ctx);
  const started = performance.now();
  const rows = await run();
  const seconds = (performance.now() - started) / 1000;
  const waited = await waits();
  const m1 = machine();
  const pg1 = await pgCpu();
  const per = (s: number) => `${Math.round((s * 1e6) / rows)}`;
  const parts: string[] = [];
  let known = 0;
  for (const [k, pid] of Object.entries(all)) {
    const s = cpuSecondsOf(pid) - c0[k]!;
    known += s;
    parts.push(`${k} ${per(s)}`);
  }
  for (const [app, s] of pg1) {
    const d = s - (pg0.get(app) ?? 0);
    if (d <= 0.01) continue;
    known += d;
    parts.push(`pg:${app} ${per(d)}`);
  }
  const loadgen = reapedChildren() - children0;
  if (loadgen > 0) {
    known += loadgen;
    parts.push(`load generator ${per(loadgen)}`);
  }
  const busy = m1.busy - m0.busy;
  const idleShare = 1 - busy / (m1.total - m0.total);
  console.log(
    `[load ${load()}] ${label}: ${rows} rows, ${Math.round(rows / seconds)} rows/s; CPU µs per row: ${parts.join(", ")}, rest of the machine ${per(busy - known)} (all ${per(busy)}); machine idle ${(idleShare * 100).toFixed(0)} %; ${waited}`,
  );
  if (pgss) await statements(rows);
}

/** CPU seconds of this database's backends by application (the ones alive now; a short-lived one is missed). */
const pgPids = new Map<number, string>();
async function pgCpu(): Promise<Map<string, number>> {
  const rows =
    await ctx.sql`SELECT pid, coalesce(nullif(application_name, ''), backend_type) AS app FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`;
  for (const r of rows) pgPids.set(Number(r.pid), String(r.app));
  const out = new Map<string, number>();
  for (const [pid, app] of pgPids) out.set(app, (out.get(app) ?? 0) + cpuSecondsOf(pid));
  return out;
}

if (process.env.FAIR !== "0") {
  for (const mode of MODES) {
    await quiesce(ctx.sql);
    await split(`fair ${mode}`, { client: process.pid }, async () => {
      const r = await fairBaseline({
        sql: ctx.sql,
        partnerId: ctx.partner.partnerId,
        brokerExternalId: ctx.brokerExternalId,
        concurrency: 32,
        durationSeconds: D,
        prefix: `${prefix}-fair`,
        mode,
        existing: 2000,
      });
      return r.rows;
    });
  }
  await removeBaselineRows(ctx.sql, ctx.partner.partnerId, `${prefix}-fair`);
}

const api = await startApiProcess({ ...ctx.urls, DATABASE_POOL_SIZE: "32" });
const procs = { api: api.pid, relay: api.relayPid!, bench: process.pid };
try {
  const common = { url: api.url, key: ctx.partner.apiKey, broker: ctx.brokerExternalId, connections: 32 };
  await runLoad({ ...common, mode: "new", prefix: `${prefix}-warm`, offset: 0, durationSeconds: 2 });
  for (const mode of MODES) {
    const phase = await beginPhase(ctx.sql, { partnerId: ctx.partner.partnerId, prefix, procs });
    await split(`API ${mode}`, procs, async () => {
      // RATE: a fixed arrival rate (open loop) instead of saturation, so settings compare at the same load.
      if (process.env.RATE)
        await runOpenLoop({
          url: api.url,
          key: ctx.partner.apiKey,
          broker: ctx.brokerExternalId,
          mode: mode === "create" ? "new" : "update",
          rate: Number(process.env.RATE),
          durationSeconds: D,
          prefix,
          existing: 2000,
          salt: Date.now() % 1_000_000,
        });
      else
        await runLoad({
          ...common,
          mode: mode === "create" ? "new" : "update",
          prefix,
          offset: 0,
          existing: 2000,
          durationSeconds: D,
        });
      const r = await phase.end();
      console.log(
        `  WAL ${Math.round(r.wal.bytes / r.rows)} B/row; drained in ${r.drainMs} ms; phase CPU µs/row ${Object.entries(
          r.cpu,
        )
          .filter(([, v]) => v > 0.01)
          .map(([k, v]) => `${k} ${Math.round((v * 1e6) / r.rows)}`)
          .join(", ")}`,
      );
      return r.rows;
    });
  }
} finally {
  await api.stop();
  await ctx.close();
}
process.exit(0);
