// Both cores: the API as 1 and as 2 processes sharing the public port (API_WORKERS, SO_REUSEPORT), PUT creates
// at saturation and an open-loop run at a fixed rate, same run. Each Bun process runs one event loop, so one
// process can use at most one core of the API's share of the machine.
import type { BenchContext } from "../lib/context.ts";
import { runLoad, runOpenLoop, startApiProcess } from "../lib/processes.ts";
import { round, type Row } from "../lib/result.ts";

const WORKER_COUNTS = [1, 2];

export async function apiWorkers(ctx: BenchContext): Promise<Row[]> {
  const prefix = `workers-${Date.now().toString(36)}`;
  const results: { workers: number; rps: number; p99: number; openP99: number; openP999: number }[] = [];
  let openRate = 0;
  for (const workers of WORKER_COUNTS) {
    // The same 32 database connections in all: split over the workers.
    const api = await startApiProcess({
      ...ctx.urls,
      API_WORKERS: String(workers),
      DATABASE_POOL_SIZE: String(Math.ceil(32 / workers)),
    });
    try {
      const common = { url: api.url, key: ctx.partner.apiKey, broker: ctx.brokerExternalId, connections: 32 };
      await runLoad({
        ...common,
        mode: "new",
        prefix: `${prefix}-${workers}-warm`,
        offset: 0,
        durationSeconds: ctx.warmupSeconds,
      });
      const r = await runLoad({
        ...common,
        mode: "new",
        prefix: `${prefix}-${workers}`,
        offset: 0,
        durationSeconds: ctx.durationSeconds,
      });
      // The open-loop rate is half of what ONE worker sustains, for both counts: same offered load.
      if (workers === 1) openRate = Math.max(1, Math.round(r.rps / 2));
      const open = await runOpenLoop({
        url: api.url,
        key: ctx.partner.apiKey,
        broker: ctx.brokerExternalId,
        mode: "new",
        rate: openRate,
        durationSeconds: ctx.durationSeconds,
        prefix: `${prefix}-${workers}-open`,
      });
      results.push({ workers, rps: r.rps, p99: r.p99, openP99: open.p99, openP999: open.p999 });
    } finally {
      await api.stop();
    }
  }
  const one = results[0]!;
  return results.map((r) => ({
    scenario: `PUT listing creates with API_WORKERS=${r.workers}`,
    figure: round(r.rps),
    unit: "req/s",
    baseline: round(one.rps),
    baselineLabel: "API_WORKERS=1, same run",
    ratio: round(r.rps / one.rps, 2),
    target: "reported (keep what helps)",
    pass: null,
    notes: `saturation p99 ${r.p99} ms; open loop at ${openRate}/s: p99 ${r.openP99} ms, p99.9 ${r.openP999} ms`,
  }));
}
