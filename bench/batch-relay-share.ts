// Diagnostic (not a benchmark row): how much of the batch path's shortfall against the fair batched baseline is the
// outbox relay and feed sequencer running on the same cores. Measures the fair baseline first (no API), then batch
// updates and creates through the API with the relay process running and with it paused (SIGSTOP for the
// measurement, SIGCONT and a drain after), alternately, with CPU per row by process. Findings: docs/benchmarks.md.
//   D=8 ROUNDS=2 MODES=update,create bun bench/batch-relay-share.ts
import { createBenchContext } from "./lib/context.ts";
import { fairBatchBaseline } from "./lib/fair-batch-baseline.ts";
import { runLoad, startApiProcess } from "./lib/processes.ts";
import { cpuBetween, sampleCpu } from "./lib/cpu-meter.ts";
import { readFileSync } from "node:fs";

const D = Number(process.env.D ?? 6);
const ctx = await createBenchContext({ durationSeconds: D, warmupSeconds: 2 });
const prefix = `bx-${Date.now().toString(36)}`;
const partnerId = ctx.partner.partnerId;
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const fmt = (o: Record<string, number>, rows: number) =>
  Object.entries(o)
    .filter(([, v]) => v > 0.05)
    .map(([k, v]) => `${k}=${(((v * 1000) / rows) * 1000).toFixed(0)}us/row`)
    .join(" ");
const common = {
  sql: ctx.sql,
  partnerId,
  brokerExternalId: ctx.brokerExternalId,
  concurrency: 4,
  durationSeconds: D,
  batchSize: 100,
};
for (const m of ["create", "update"] as const) {
  const s0 = await sampleCpu(ctx.sql, {});
  const fair = await fairBatchBaseline({ ...common, prefix: `${prefix}-fair`, mode: m, existing: 2000 });
  const s1 = await sampleCpu(ctx.sql, {});
  console.log(
    `[${load()}] fair ${m}: ${Math.round(fair.rowsPerSecond)} rows/s p50 ${Math.round(fair.p50)} ${fmt(cpuBetween(s0, s1), fair.rowsPerSecond * D)}`,
  );
}
const api = await startApiProcess({ ...ctx.urls, DATABASE_POOL_SIZE: "32" });
const procs: Record<string, number> = { api: api.pid, ...(api.relayPid ? { relay: api.relayPid } : {}) };
try {
  const base = { url: api.url, key: ctx.partner.apiKey, broker: ctx.brokerExternalId };
  const seed = await runLoad({
    ...base,
    mode: "batch-new",
    connections: 4,
    batchSize: 100,
    prefix: `${prefix}-api`,
    offset: 0,
    durationSeconds: 4,
  });
  console.log(`seeded ${seed.sent * 100}`);
  const modes = (process.env.MODES ?? "update,create").split(",");
  for (let r = 0; r < Number(process.env.ROUNDS ?? 2); r++) {
    for (const m of modes) {
      for (const paused of [false, true]) {
        if (paused) process.kill(api.relayPid!, "SIGSTOP");
        const s0 = await sampleCpu(ctx.sql, procs);
        const res =
          m === "update"
            ? await runLoad({
                ...base,
                mode: "batch-update",
                connections: 4,
                batchSize: 100,
                prefix: `${prefix}-api`,
                existing: 2000,
                salt: 1000 * r + (paused ? 500 : 0),
                durationSeconds: D,
              })
            : await runLoad({
                ...base,
                mode: "batch-new",
                connections: 4,
                batchSize: 100,
                prefix: `${prefix}-api`,
                offset: 1_000_000 * (r + 1) + (paused ? 500_000 : 0),
                durationSeconds: D,
              });
        const s1 = await sampleCpu(ctx.sql, procs);
        if (paused) process.kill(api.relayPid!, "SIGCONT");
        const rows = res.rps * 100 * D;
        console.log(
          `[${load()}] api ${m} relay ${paused ? "PAUSED" : "running"}: ${Math.round(res.rps * 100)} rows/s p50 ${res.p50} fail ${res.itemFailures} ${fmt(cpuBetween(s0, s1), rows)}`,
        );
        await Bun.sleep(4000); // the relay drains
      }
    }
  }
} finally {
  await api.stop();
  await ctx.close();
}
process.exit(0);
