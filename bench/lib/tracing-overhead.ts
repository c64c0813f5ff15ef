// Issue 43's tracing overhead, part of partner-writes: saturated single PUT creates through API processes with
// tracing off, at ratio 0.1 and at ratio 1.0, same run, alternating (off, 0.1, 1.0, 1.0, 0.1, off) so a drift of
// the machine's load hits every setting alike; each figure is the mean of its two measurements. The spans go to a
// span sink on loopback in this process (it takes Zipkin's JSON, counts the spans and answers 202 as Zipkin does):
// the service pays all of its own cost (recording, the queue, serialising, the HTTP request), and no Zipkin JVM
// competes with the API for the two cores, as it would not on a real deployment where the store runs elsewhere.
import type { BenchContext } from "./context.ts";
import { settle } from "./open-loop-conditions.ts";
import { runLoad, startApiProcess } from "./processes.ts";
import { round, type Row } from "./result.ts";
import { meets, targetText } from "./targets.ts";

function startSpanSink() {
  let spans = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      spans += ((await request.json()) as unknown[]).length;
      return new Response(null, { status: 202 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/api/v2/spans`, spans: () => spans, stop: () => server.stop(true) };
}

export async function tracingOverhead(ctx: BenchContext, prefix: string, connections: number): Promise<Row[]> {
  const sink = startSpanSink();
  const settings = {
    off: {},
    "0.1": { TRACING_ZIPKIN_URL: sink.url, TRACING_SAMPLE_RATIO: "0.1" },
    "1.0": { TRACING_ZIPKIN_URL: sink.url, TRACING_SAMPLE_RATIO: "1" },
  } as const;
  type Setting = keyof typeof settings;
  const order: Setting[] = ["off", "0.1", "1.0", "1.0", "0.1", "off"];
  const measured: Record<Setting, { rps: number[]; p99: number[]; spans: number; requests: number }> = {
    off: { rps: [], p99: [], spans: 0, requests: 0 },
    "0.1": { rps: [], p99: [], spans: 0, requests: 0 },
    "1.0": { rps: [], p99: [], spans: 0, requests: 0 },
  };
  try {
    for (const [i, setting] of order.entries()) {
      await settle(ctx);
      const api = await startApiProcess({ ...ctx.urls, DATABASE_POOL_SIZE: String(connections), ...settings[setting] });
      try {
        const common = { url: api.url, key: ctx.partner.apiKey, broker: ctx.brokerExternalId, connections };
        await runLoad({
          ...common,
          mode: "new",
          prefix: `${prefix}-tw${i}`,
          offset: 0,
          durationSeconds: ctx.warmupSeconds,
        });
        const spansBefore = sink.spans();
        const r = await runLoad({
          ...common,
          mode: "new",
          prefix: `${prefix}-t${i}`,
          offset: 0,
          durationSeconds: ctx.durationSeconds,
        });
        measured[setting].rps.push(r.rps);
        measured[setting].p99.push(r.p99);
        measured[setting].requests += r.requests;
        // Spans still queued at the end arrive at the stop (flushed before the process exits).
        await api.stop();
        measured[setting].spans += sink.spans() - spansBefore;
      } finally {
        await api.stop();
      }
    }
  } finally {
    sink.stop();
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const off = mean(measured.off.rps);
  const row = (setting: "0.1" | "1.0"): Row => {
    const m = measured[setting];
    const ratio = mean(m.rps) / off;
    const gated = setting === "0.1";
    return {
      scenario: `PUT listing creates with tracing at ratio ${setting} vs tracing off (same run)`,
      figure: round(mean(m.rps)),
      unit: "req/s",
      baseline: round(off),
      baselineLabel: "tracing off (no TRACING_ZIPKIN_URL)",
      ratio: round(ratio, 3),
      target: gated ? targetText("tracingOverhead") : "reported",
      pass: gated ? meets("tracingOverhead", ratio) : null,
      ...(gated ? { targetId: "tracingOverhead" as const } : {}),
      notes: `rounds ${m.rps.map((x) => round(x)).join(", ")} req/s (off: ${measured.off.rps.map((x) => round(x)).join(", ")}); p99 ${m.p99.join(", ")} ms (off: ${measured.off.p99.join(", ")}); ${round(m.spans / Math.max(1, m.requests), 2)} spans exported per request (API and relay)`,
    };
  };
  return [row("0.1"), row("1.0")];
}
