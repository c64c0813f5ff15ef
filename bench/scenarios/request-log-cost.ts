// What the request log (issue 42; the portal's "API requests") costs single PUTs: creates at saturation with
// API_REQUEST_LOG=true against the same with it off, in the same run. The machine is shared, so the two are measured
// in alternating pairs (off, on, on, off, off, on: drift affects both alike) and each pair's ratio is reported. Two
// figures: requests per second (what the target names, but on a machine shared by others it moves by tens of per
// cent between identical runs), and CPU time per request of everything the PUT uses (the API process, the relay,
// this database's PostgreSQL backends; read from /proc, cpu-meter.ts), which stays steady under others' load and is
// what throughput is made of when the CPUs are the limit; both still move by several per cent between identical runs
// under others' load. So a third figure measures the log's own work alone (request-log-writer-cost.ts: recording and
// writing as many records as the API flushes a second, CPU in this process and in PostgreSQL), steady to a few
// microseconds, against the CPU per PUT without the log from the same run: the target (the log costs ≤ 5 % of a
// single PUT) is held on that. partner-writes runs it; `npm run bench -- request-log` alone.
import type { BenchContext } from "../lib/context.ts";
import { cpuBetween, sampleCpu } from "../lib/cpu-meter.ts";
import { runLoad, startApiProcess } from "../lib/processes.ts";
import { requestLogWriterCost } from "../lib/request-log-writer-cost.ts";
import { round, type Row } from "../lib/result.ts";

const CONNECTIONS = 32;
const ORDER = [false, true, true, false, false, true] as const;

interface Run {
  on: boolean;
  rps: number;
  p99: number;
  non2xx: number;
  /** CPU milliseconds per request: API + relay + PostgreSQL backends. */
  cpuMs: number;
}

const median3 = (xs: number[]) => [...xs].sort((a, b) => a - b)[1] ?? NaN;

export async function requestLogCost(ctx: BenchContext): Promise<Row[]> {
  const prefix = `bench-rlog-${Date.now().toString(36)}`;
  const runs: Run[] = [];
  let offset = 0;
  for (const [i, on] of ORDER.entries()) {
    const api = await startApiProcess({
      ...ctx.urls,
      DATABASE_POOL_SIZE: String(CONNECTIONS),
      API_REQUEST_LOG: on ? "true" : "false",
    });
    try {
      const common = { url: api.url, key: ctx.partner.apiKey, broker: ctx.brokerExternalId, connections: CONNECTIONS };
      await runLoad({
        ...common,
        mode: "new",
        prefix: `${prefix}-${i}w`,
        offset: 0,
        durationSeconds: ctx.warmupSeconds,
      });
      const procs = { api: api.pid, ...(api.relayPid ? { relay: api.relayPid } : {}) };
      const before = await sampleCpu(ctx.sql, procs);
      const r = await runLoad({
        ...common,
        mode: "new",
        prefix: `${prefix}-${i}`,
        offset,
        durationSeconds: ctx.durationSeconds,
      });
      // The last flush (at most a second of records) belongs to this load too.
      await Bun.sleep(1500);
      const used = cpuBetween(before, await sampleCpu(ctx.sql, procs));
      const cpuSeconds = Object.values(used).reduce((a, b) => a + b, 0);
      offset += r.sent;
      runs.push({ on, rps: r.rps, p99: r.p99, non2xx: r.non2xx, cpuMs: (1000 * cpuSeconds) / Math.max(1, r.requests) });
    } finally {
      await api.stop();
    }
  }
  // Pairs in the order run: (off, on), (on, off), (off, on).
  const pairs = [0, 2, 4].map((i) => {
    const [a, b] = [runs[i], runs[i + 1]];
    if (!a || !b) return { rps: NaN, cpu: NaN };
    const [on, off] = a.on ? [a, b] : [b, a];
    return { rps: on.rps / off.rps, cpu: on.cpuMs / off.cpuMs };
  });
  const rpsRatio = median3(pairs.map((p) => p.rps));
  const cpuRatio = median3(pairs.map((p) => p.cpu));
  const spread = (xs: number[]) => round(Math.max(...xs) - Math.min(...xs), 3);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const on = runs.filter((r) => r.on);
  const off = runs.filter((r) => !r.on);
  const clean = runs.every((r) => r.non2xx === 0);
  // The log's own work per record, in batches of one second's PUTs (the API flushes every second).
  const batch = Math.max(50, Math.round(mean(on.map((r) => r.rps))));
  const [key] = await ctx.sql`SELECT id::text AS id FROM api_keys WHERE partner_id = ${ctx.partner.partnerId} LIMIT 1`;
  const writer = await requestLogWriterCost({
    databaseUrl: ctx.urls.DATABASE_URL,
    partnerId: ctx.partner.partnerId,
    keyId: String(key?.id ?? "1"),
    records: 30_000,
    batch,
  });
  const perRecordMs = (writer.apiMicrosPerRecord + writer.pgMicrosPerRecord) / 1000;
  const putMs = Math.min(...off.map((r) => r.cpuMs));
  const share = perRecordMs / putMs;
  return [
    {
      scenario: "request log: its own CPU per PUT, against a PUT's CPU without it",
      figure: round(perRecordMs * 1000, 1),
      unit: "CPU µs/req",
      baseline: round(putMs * 1000),
      baselineLabel: "CPU µs per PUT create without the log (fastest run of this one)",
      ratio: round(1 + share, 3),
      target: "≤ 1.05 (the log costs ≤ 5 %)",
      pass: share <= 0.05 && clean,
      notes: `writer alone: ${round(writer.apiMicrosPerRecord, 1)} µs in the API process + ${round(writer.pgMicrosPerRecord, 1)} µs in PostgreSQL per record, 30,000 records in batches of ${batch} (one second's PUTs at this run's rate); the request path itself only appends to memory`,
    },
    {
      scenario: "PUT listing creates: CPU per request, request log on vs off",
      figure: round(mean(on.map((r) => r.cpuMs)), 2),
      unit: "CPU ms/req",
      baseline: round(mean(off.map((r) => r.cpuMs)), 2),
      baselineLabel: "same load, API_REQUEST_LOG=false, alternating runs",
      ratio: round(cpuRatio, 3),
      target: "reported (≤ 1.05 on a quiet machine)",
      pass: null,
      notes: `pair ratios ${pairs.map((p) => round(p.cpu, 3)).join(", ")} (spread ${spread(pairs.map((p) => p.cpu))}); runs ${runs.map((r) => `${r.on ? "on" : "off"} ${round(r.cpuMs, 2)}`).join(", ")} CPU ms/req (API, relay and PostgreSQL backends)`,
    },
    {
      scenario: "PUT listing creates: throughput, request log on vs off",
      figure: round(mean(on.map((r) => r.rps))),
      unit: "req/s",
      baseline: round(mean(off.map((r) => r.rps))),
      baselineLabel: "same load, API_REQUEST_LOG=false, alternating runs",
      ratio: round(rpsRatio, 3),
      target: "reported (≥ 0.95 on a quiet machine)",
      pass: null,
      notes: `pair ratios ${pairs.map((p) => round(p.rps, 3)).join(", ")} (spread ${spread(pairs.map((p) => p.rps))}); runs ${runs.map((r) => `${r.on ? "on" : "off"} ${round(r.rps)}`).join(", ")} req/s; p99 on ${on.map((r) => r.p99).join("/")} ms, off ${off.map((r) => r.p99).join("/")} ms; load average at the end ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")}`,
    },
  ];
}
