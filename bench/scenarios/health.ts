// GET /partner/v1/health with a valid key against a bare Bun.serve answering the same JSON.
import type { BenchContext } from "../lib/context.ts";
import { runLoad, startApiProcess, startBareServer } from "../lib/processes.ts";
import { round, type Row } from "../lib/result.ts";

export async function health(ctx: BenchContext): Promise<Row[]> {
  const bare = await startBareServer();
  let baseline;
  try {
    await runLoad({ url: bare.url, mode: "get", path: "/", connections: 32, durationSeconds: ctx.warmupSeconds });
    baseline = await runLoad({
      url: bare.url,
      mode: "get",
      path: "/",
      connections: 32,
      durationSeconds: ctx.durationSeconds,
    });
  } finally {
    await bare.stop();
  }
  const api = await startApiProcess({ ...ctx.urls });
  try {
    const spec = {
      url: api.url,
      mode: "get" as const,
      path: "/partner/v1/health",
      key: ctx.partner.apiKey,
      connections: 32,
    };
    await runLoad({ ...spec, durationSeconds: ctx.warmupSeconds });
    const r = await runLoad({ ...spec, durationSeconds: ctx.durationSeconds });
    return [
      {
        scenario: "GET health with a valid key",
        figure: round(r.rps),
        unit: "req/s",
        baseline: round(baseline.rps),
        baselineLabel: "bare Bun.serve, same JSON",
        ratio: round(r.rps / baseline.rps, 2),
        target: "≥ 0.7",
        pass: r.rps / baseline.rps >= 0.7 && r.non2xx === 0,
        notes: `p50 ${r.p50} ms, p99 ${r.p99} ms; non-2xx ${r.non2xx}`,
      },
    ];
  } finally {
    await api.stop();
  }
}
