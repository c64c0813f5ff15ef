// Diagnostic (not a benchmark row): what stalls single PUTs at low load (issue 23 item 4). Saturates creates and
// updates, then runs open-loop PUTs at the given fractions of saturation, listing every request slower than 15 ms
// with the time it was due, beside a 50 ms monitor (what the database's client backends wait on, outbox and feed
// backlogs, autovacuum workers, checkpoints, API connections, API and relay CPU) and an fdatasync probe on the
// database's disk; prints a timeline of the 0.5 s windows with slow requests. Findings: docs/benchmarks.md.
//   D=12 MODES=new,update FRACTIONS=0.25,0.5 bun bench/low-load-tail.ts
import { createBenchContext } from "./lib/context.ts";
import { runLoad, runOpenLoop, startApiProcess } from "./lib/processes.ts";
import { cpuSecondsOf } from "./lib/cpu-meter.ts";
import { readFileSync } from "node:fs";

const D = Number(process.env.D ?? 12);
const ctx = await createBenchContext({ durationSeconds: D, warmupSeconds: 2 });
const prefix = `tl-${Date.now().toString(36)}`;
const api = await startApiProcess({ ...ctx.urls, DATABASE_POOL_SIZE: "32" });
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
type S = {
  t: number;
  feedPending: number;
  unpublished: number;
  av: number;
  ckpt: number;
  apiConns: number;
  newest: number;
  apiCpu: number;
  relayCpu: number;
  waits: string;
};
const samples: S[] = [];
let monitoring = false;
async function monitor() {
  while (monitoring) {
    const [r] = await ctx.sql`SELECT
      (SELECT count(*)::int FROM outbox WHERE feed_pending) AS feed_pending,
      (SELECT count(*)::int FROM outbox WHERE published_at IS NULL AND set_aside_at IS NULL) AS unpublished,
      (SELECT count(*)::int FROM pg_stat_activity WHERE backend_type = 'autovacuum worker') AS av,
      (SELECT (checkpoints_timed + checkpoints_req)::int FROM pg_stat_bgwriter) AS ckpt,
      (SELECT count(*)::int FROM pg_stat_activity WHERE application_name = 'pss-api' AND datname = current_database()) AS api_conns,
      (SELECT coalesce(extract(epoch FROM max(backend_start)) * 1000, 0)::float8 FROM pg_stat_activity WHERE application_name = 'pss-api' AND datname = current_database()) AS newest,
      (SELECT coalesce(string_agg(coalesce(wait_event_type || ':' || wait_event, 'CPU'), ','), '') FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND datname = current_database()) AS waits,
      (SELECT coalesce(string_agg(wait_event_type || ':' || wait_event, ','), '') FROM pg_stat_activity WHERE backend_type IN ('walwriter', 'checkpointer', 'background writer') AND wait_event_type = 'IO') AS bg`;
    samples.push({
      t: Date.now(),
      feedPending: r!.feed_pending,
      unpublished: r!.unpublished,
      av: r!.av,
      ckpt: r!.ckpt,
      apiConns: r!.api_conns,
      newest: Number(r!.newest),
      apiCpu: cpuSecondsOf(api.pid),
      relayCpu: cpuSecondsOf(api.relayPid!),
      waits: `${r!.waits}${r!.bg ? ` bg:${r!.bg}` : ""}`,
    });
    await Bun.sleep(50);
  }
}
try {
  const base = { url: api.url, key: ctx.partner.apiKey, broker: ctx.brokerExternalId };
  await runLoad({ ...base, mode: "new", connections: 32, prefix: `${prefix}-warm`, offset: 0, durationSeconds: 3 });
  const sat = await runLoad({
    ...base,
    mode: "new",
    connections: 32,
    prefix: `${prefix}-sat`,
    offset: 0,
    durationSeconds: D,
  });
  console.log(`[${load()}] saturation creates ${Math.round(sat.rps)} req/s`);
  const satUp = await runLoad({
    ...base,
    mode: "update",
    connections: 32,
    prefix: `${prefix}-sat`,
    existing: 2000,
    durationSeconds: D,
  });
  console.log(`[${load()}] saturation updates ${Math.round(satUp.rps)} req/s`);
  const modes = (process.env.MODES ?? "new").split(",") as ("new" | "update")[];
  const fractions = (process.env.FRACTIONS ?? "0.25,0.5").split(",").map(Number);
  for (const mode of modes)
    for (const fraction of fractions) {
      const rate = Math.round((mode === "new" ? sat.rps : satUp.rps) * fraction);
      samples.length = 0;
      monitoring = true;
      const mon = monitor();
      const began = Date.now();
      const probe = Bun.spawn(["python3", "bench/lib/fsync-probe.py", ".data/fsync-probe", String(D + 1)], {
        stdout: "pipe",
      });
      const probeOut = new Response(probe.stdout).text();
      const r = await runOpenLoop({
        ...base,
        mode,
        rate,
        durationSeconds: D,
        prefix: mode === "new" ? `${prefix}-open-${fraction}` : `${prefix}-sat`,
        existing: 2000,
        salt: Math.round(fraction * 1e6),
        traceSlowMs: 15,
      });
      monitoring = false;
      await mon;
      const syncs = (await probeOut)
        .trim()
        .split("\n")
        .map((l) => l.split(" ").map(Number) as [number, number]);
      const sl = syncs.map((x) => x[1]).sort((a, b) => a - b);
      console.log(
        `  fsync probe: ${sl.length} syncs, p50 ${sl[Math.floor(sl.length / 2)]} ms, p99 ${sl[Math.floor(sl.length * 0.99)]} ms, max ${sl.at(-1)} ms`,
      );
      // Correlation: share of slow requests whose [due, due+latency] window overlaps an fsync slower than 10 ms.
      const slowSyncs = syncs.filter((x) => x[1] > 10);
      const overl = r.slow!.filter(([due, lat]) => slowSyncs.some(([t, d]) => t < due + lat && t + d > due)).length;
      console.log(
        `  slow requests overlapping an fsync > 10 ms: ${overl} of ${r.slow!.length}; fsyncs > 10 ms: ${slowSyncs.length} of ${syncs.length}`,
      );
      console.log(
        `[${load()}] ${mode} ${fraction * 100}% rate ${rate}: p50 ${r.p50} p99 ${r.p99} p999 ${r.p999} slow>15ms ${r.slow!.length}`,
      );
      // Timeline in 500 ms buckets.
      for (let t = began; t < began + D * 1000; t += 500) {
        const slow = r.slow!.filter(([due]) => due >= t && due < t + 500);
        const ss = samples.filter((s) => s.t >= t && s.t < t + 500);
        if (!ss.length) continue;
        const a = ss[0]!,
          b = ss.at(-1)!;
        const fs = syncs.filter(([ts]) => ts >= t && ts < t + 500).map((x) => x[1]);
        const line = `  +${((t - began) / 1000).toFixed(1)}s slow ${slow.length} max ${Math.max(0, ...slow.map((x) => x[1]))} | fsync max ${Math.max(0, ...fs).toFixed(1)} | feedPending ${Math.max(...ss.map((s) => s.feedPending))} unpublished ${Math.max(...ss.map((s) => s.unpublished))} av ${Math.max(...ss.map((s) => s.av))} ckpt ${b.ckpt} conns ${Math.min(...ss.map((s) => s.apiConns))}-${Math.max(...ss.map((s) => s.apiConns))} newConn ${ss.some((s) => s.newest > t - 100 && s.newest !== a.newest) ? "Y" : "-"} apiCpu ${(((b.apiCpu - a.apiCpu) * 100) / 0.5).toFixed(0)}% relayCpu ${(((b.relayCpu - a.relayCpu) * 100) / 0.5).toFixed(0)}% waits ${[...new Set(ss.flatMap((s) => s.waits.split(",").filter((w) => w && w !== "CPU")))].join(" ")}`;
        if (slow.length || process.env.ALL) console.log(line);
      }
    }
} finally {
  await api.stop();
  await ctx.close();
}
process.exit(0);
