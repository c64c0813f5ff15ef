// Change-feed reads (GET /partner/v1/events, pages of 500) with a large feed stored: the events are seeded by SQL
// (realistic listing.updated rows) for the bench partner, read from random points by 2 concurrent readers (closed loop), and
// removed afterwards. BENCH_FEED_EVENTS sets how many (default 1,000,000).
import type { BenchContext } from "../lib/context.ts";
import { runLoad, startApiProcess } from "../lib/processes.ts";
import { round, type Row } from "../lib/result.ts";

const PAGE = 500;
const P99_TARGET_MS = 20;
const READERS = 2;

export async function feedRead(ctx: BenchContext): Promise<Row[]> {
  const events = Number(process.env.BENCH_FEED_EVENTS ?? 1_000_000);
  const { partnerId } = ctx.partner;
  const seedStarted = performance.now();
  // After the partner's own events (earlier scenarios wrote some through the API), under the head row's lock, so
  // the numbering stays the sequencer's: one run of numbers with no gap and no clash.
  // Both audiences' numbers (migration 0029): these events carry no lead data, so each takes the next of both.
  const head = await ctx.sql.begin(async (tx) => {
    await tx`INSERT INTO partner_feed_heads (partner_id, mode, last_seq) VALUES (${partnerId}::uuid, 'live', 0) ON CONFLICT (partner_id, mode) DO NOTHING`;
    const [row] =
      await tx`SELECT last_seq::bigint AS last, last_record_seq::bigint AS last_record FROM partner_feed_heads WHERE partner_id = ${partnerId}::uuid AND mode = 'live' FOR UPDATE`;
    const base = Number(row?.last ?? 0);
    const recordBase = Number(row?.last_record ?? 0);
    for (let from = base + 1; from <= base + events; from += 100_000) {
      const to = Math.min(base + events, from + 99_999);
      await tx`
        INSERT INTO partner_feed (partner_id, mode, seq, record_seq, type, event_id, record_type, version, data, occurred_at)
        SELECT ${partnerId}::uuid, 'live', n, n - ${base}::bigint + ${recordBase}::bigint, 'listing.updated', gen_random_uuid(), 'listing', 2,
          jsonb_build_object('externalListingId', 'bench-' || n, 'serviceListingId', n, 'serviceBrokerId', '1', 'status', 'FOR_SALE', 'changedPaths', jsonb_build_array('financials.askingPrice')),
          now()
        FROM generate_series(${from}::bigint, ${to}::bigint) AS n`;
    }
    await tx`UPDATE partner_feed_heads SET last_seq = ${base + events}, last_record_seq = ${recordBase + events} WHERE partner_id = ${partnerId}::uuid AND mode = 'live'`;
    return base + events;
  });
  await ctx.sql`ANALYZE partner_feed`;
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  const api = await startApiProcess({ ...ctx.urls });
  try {
    // Two readers at once: a partner's feed consumer reads one page after another; latency, not saturation, is the target.
    const base = {
      url: api.url,
      key: ctx.partner.apiKey,
      mode: "feed" as const,
      existing: head,
      pageSize: PAGE,
      connections: READERS,
    };
    await runLoad({ ...base, durationSeconds: ctx.warmupSeconds });
    const r = await runLoad({ ...base, durationSeconds: ctx.durationSeconds });
    return [
      {
        scenario: `Change feed read, pages of ${PAGE}, ${events.toLocaleString("en-US")} events stored`,
        figure: r.p99,
        unit: "ms p99",
        target: `≤ ${P99_TARGET_MS} ms`,
        pass: r.p99 <= P99_TARGET_MS && r.non2xx === 0,
        notes: `p50 ${r.p50} ms, p99.9 ${r.p999} ms, ${round(r.rps)} pages/s with ${READERS} readers; seeded in ${round(seedSeconds)} s; non-2xx ${r.non2xx}`,
      },
    ];
  } finally {
    await api.stop();
    await ctx.sql`DELETE FROM partner_feed WHERE partner_id = ${partnerId}::uuid`;
    await ctx.sql`DELETE FROM partner_feed_heads WHERE partner_id = ${partnerId}::uuid`;
  }
}
