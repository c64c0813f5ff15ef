// Diagnostic (issue 43): a CPU profile of the API process per request under saturated single PUTs (creates, then
// updates), the relay in its own process: where the API's own time goes (HTTP, JSON, validation, merge, hash,
// diff, SQL building, tracing). Writes Bun's profiles (Chrome format and Markdown) to BENCH_PROFILE_DIR.
//   BENCH_PROFILE_DIR=/tmp/prof D=8 bun bench/put-profile.ts     (TRACING_* in the environment reach the API)
import { createBenchContext } from "./lib/context.ts";
import { runLoad, startApiProcess } from "./lib/processes.ts";

if (!process.env.BENCH_PROFILE_DIR) throw new Error("set BENCH_PROFILE_DIR to where the profiles go");
const D = Number(process.env.D ?? 8);
const ctx = await createBenchContext({ durationSeconds: D, warmupSeconds: 2 });
const prefix = `prof-${Date.now().toString(36)}`;
const api = await startApiProcess({ ...ctx.urls, DATABASE_POOL_SIZE: "32" });
try {
  const common = { url: api.url, key: ctx.partner.apiKey, broker: ctx.brokerExternalId, connections: 32 };
  const created = await runLoad({ ...common, mode: "new", prefix, offset: 0, durationSeconds: D });
  const updated = await runLoad({
    ...common,
    mode: "update",
    prefix,
    existing: Math.min(created.sent, 2000),
    durationSeconds: D,
  });
  console.log(`creates ${Math.round(created.rps)} req/s, updates ${Math.round(updated.rps)} req/s`);
} finally {
  await api.stop();
  await ctx.close();
}
console.log(`profiles in ${process.env.BENCH_PROFILE_DIR}`);
