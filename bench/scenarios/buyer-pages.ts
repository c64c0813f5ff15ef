// A buyer's listing page, GET /listings/{id} as a browser asks for it, with per-listing statistics counted
// (the default) and with counting off (BUYER_STATS_FLUSH_MS=0): what counting views costs a page (issue 24).
// Counting appends to memory; the flusher (here every second) deduplicates in Redis and writes PostgreSQL.
import type { BenchContext } from "../lib/context.ts";
import { runLoad, startApiProcess } from "../lib/processes.ts";
import { round, type Row } from "../lib/result.ts";

const FIREFOX = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:127.0) Gecko/20100101 Firefox/127.0";

export async function buyerPages(ctx: BenchContext): Promise<Row[]> {
  let listingId: number | null = null;
  const runs: Record<"off" | "on", Awaited<ReturnType<typeof runLoad>>> = {} as never;
  for (const counting of ["off", "on"] as const) {
    const api = await startApiProcess({
      ...ctx.urls,
      BUYER_STATS_FLUSH_MS: counting === "on" ? "1000" : "0",
      TRUST_PROXY_CIDRS: "127.0.0.0/8,::1", // each visitor's own address (load.mjs), as behind our proxy
    });
    try {
      if (listingId === null) {
        const res = await fetch(`${api.url}/partner/v1/listings/bench-buyer-page`, {
          method: "PUT",
          headers: { authorization: `Bearer ${ctx.partner.apiKey}`, "content-type": "application/json" },
          body: JSON.stringify({
            brokerExternalId: ctx.brokerExternalId,
            status: "FOR_SALE",
            businessType: "Restaurant",
            title: "Benchmark taqueria",
            description: "A well-established taqueria with trained staff and a loyal lunch crowd.",
            location: { city: "Austin", state: "TX", country: "US", visibility: "SHOW_CITY_STATE" },
            financials: { askingPrice: 450000 },
          }),
        });
        if (res.status !== 200 && res.status !== 201) throw new Error(`listing PUT answered ${res.status}`);
        listingId = ((await res.json()) as { serviceListingId: number }).serviceListingId;
      }
      // 50,000 distinct visitors in turn: most requests are a new visitor that the flusher asks Redis about.
      const spec = {
        url: api.url,
        mode: "get" as const,
        path: `/listings/${listingId}`,
        connections: 16,
        userAgent: FIREFOX,
        visitors: 50_000,
      };
      await runLoad({ ...spec, durationSeconds: ctx.warmupSeconds });
      runs[counting] = await runLoad({ ...spec, durationSeconds: ctx.durationSeconds });
    } finally {
      await api.stop();
    }
  }
  const { on, off } = runs;
  // Two measurements on a shared machine differ by noise: pass within 25 % or 2 ms of the p99 without counting.
  const pass = (on.p99 <= off.p99 * 1.25 || on.p99 - off.p99 <= 2) && on.non2xx === 0 && off.non2xx === 0;
  return [
    {
      scenario: "buyer listing page p99, views counted",
      figure: on.p99,
      unit: "ms",
      baseline: off.p99,
      baselineLabel: "same page, counting off (BUYER_STATS_FLUSH_MS=0)",
      ratio: round(on.p99 / Math.max(off.p99, 0.001), 2),
      target: "≤ 1.25 (or ≤ +2 ms)",
      pass,
      notes: `counting on: ${round(on.rps)} req/s, p50 ${on.p50} ms, p99 ${on.p99} ms; off: ${round(off.rps)} req/s, p50 ${off.p50} ms, p99 ${off.p99} ms; non-2xx ${on.non2xx + off.non2xx}`,
    },
  ];
}
