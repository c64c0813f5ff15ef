// PUT listing throughput against the same SQL transactions driven straight from a PostgreSQL client, the
// no-op repeat path, the outbox relay keeping up, and the API's memory under that load.
import type { BenchContext } from "../lib/context.ts";
import { runLoad, startApiProcess, type ApiProcess } from "../lib/processes.ts";
import { round, type Row } from "../lib/result.ts";
import { sqlBaseline } from "../lib/sql-baseline.ts";

const CONNECTIONS = 32;

async function sampleWhile<T>(api: ApiProcess, ctx: BenchContext, run: () => Promise<T>) {
  const rss: number[] = [];
  const backlog: number[] = [];
  const timer = setInterval(async () => {
    rss.push(api.rssMb());
    const [row] = await ctx.sql`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`;
    backlog.push(row!.n);
  }, 1000);
  try {
    return { result: await run(), rss, backlog };
  } finally {
    clearInterval(timer);
  }
}

export async function partnerWrites(ctx: BenchContext): Promise<Row[]> {
  const rows: Row[] = [];
  const prefix = `bench-${Date.now().toString(36)}`;

  // Baselines first, with no API (and so no outbox relay) running; their rows are removed afterwards.
  const baseCreate = await sqlBaseline({ sql: ctx.sql, partnerId: ctx.partner.partnerId, brokerId: ctx.brokerId, concurrency: CONNECTIONS, durationSeconds: ctx.durationSeconds, prefix: `${prefix}-base`, mode: "new" });
  const baseUpdate = await sqlBaseline({ sql: ctx.sql, partnerId: ctx.partner.partnerId, brokerId: ctx.brokerId, concurrency: CONNECTIONS, durationSeconds: ctx.durationSeconds, prefix: `${prefix}-base`, mode: "update", existing: 2000 });
  await ctx.sql`DELETE FROM listing_photos WHERE listing_id IN (SELECT id FROM listings WHERE partner_id = ${ctx.partner.partnerId} AND external_id LIKE ${`${prefix}-base-%`})`;
  await ctx.sql`DELETE FROM listings WHERE partner_id = ${ctx.partner.partnerId} AND external_id LIKE ${`${prefix}-base-%`}`;

  const api = await startApiProcess({ ...ctx.urls, DATABASE_POOL_SIZE: String(CONNECTIONS) });
  try {
    const common = { url: api.url, key: ctx.partner.apiKey, broker: ctx.brokerExternalId, connections: CONNECTIONS };
    await runLoad({ ...common, mode: "new", prefix: `${prefix}-warm`, offset: 0, durationSeconds: ctx.warmupSeconds });
    const rssAfterWarmup = api.rssMb();

    const create = await sampleWhile(api, ctx, () => runLoad({ ...common, mode: "new", prefix, offset: 0, durationSeconds: ctx.durationSeconds }));
    const created = create.result.sent;
    rows.push({
      scenario: "PUT listing, new external IDs, 32 connections",
      figure: round(create.result.rps),
      unit: "req/s",
      baseline: round(baseCreate.tps),
      baselineLabel: "same SQL transactions from a Postgres client, 32 concurrent",
      ratio: round(create.result.rps / baseCreate.tps, 2),
      target: "≥ 0.6; p99 ≤ 25 ms",
      pass: create.result.rps / baseCreate.tps >= 0.6 && create.result.p99 <= 25 && create.result.non2xx === 0,
      notes: `p50 ${create.result.p50} ms, p99 ${create.result.p99} ms (baseline p99 ${round(baseCreate.p99)} ms); non-2xx ${create.result.non2xx}, errors ${create.result.errors}`,
    });

    const writeRate = create.result.rps;
    // Let the relay finish, measuring how fast it drains what is left.
    const backlogAtEnd = create.backlog.at(-1) ?? 0;
    const drainStart = performance.now();
    let left = backlogAtEnd;
    while (left > 0 && performance.now() - drainStart < 60_000) {
      await Bun.sleep(200);
      left = (await ctx.sql`SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL`)[0]!.n;
    }
    const maxBacklog = Math.max(0, ...create.backlog);
    rows.push({
      scenario: "outbox relay under full PUT load",
      figure: maxBacklog,
      unit: "rows pending (max)",
      baseline: round(writeRate),
      baselineLabel: "API write rate (events/s)",
      target: "backlog bounded: ≤ 2 s of writes",
      pass: maxBacklog <= writeRate * 2 && left === 0,
      notes: `backlog samples ${create.backlog.join(", ")}; drained the last ${backlogAtEnd} in ${round((performance.now() - drainStart) / 1000)} s`,
    });

    const update = await sampleWhile(api, ctx, () => runLoad({ ...common, mode: "update", prefix, existing: Math.min(created, 2000), durationSeconds: ctx.durationSeconds }));
    rows.push({
      scenario: "PUT listing, changed field on existing IDs",
      figure: round(update.result.rps),
      unit: "req/s",
      baseline: round(baseUpdate.tps),
      baselineLabel: "same SQL transactions from a Postgres client, 32 concurrent",
      ratio: round(update.result.rps / baseUpdate.tps, 2),
      target: "≥ 0.6",
      pass: update.result.rps / baseUpdate.tps >= 0.6 && update.result.non2xx === 0,
      notes: `p50 ${update.result.p50} ms, p99 ${update.result.p99} ms; non-2xx ${update.result.non2xx}`,
    });

    // Repeat exactly what is stored: the warm-up IDs were written with the unchanged body.
    const repeat = await sampleWhile(api, ctx, () => runLoad({ ...common, mode: "repeat", prefix: `${prefix}-warm`, existing: 1000, durationSeconds: ctx.durationSeconds }));
    rows.push({
      scenario: "PUT listing, identical repeats (no-op)",
      figure: round(repeat.result.rps),
      unit: "req/s",
      baseline: round(create.result.rps),
      baselineLabel: "PUT listing creates in this run",
      ratio: round(repeat.result.rps / create.result.rps, 2),
      target: "≥ 1.5",
      pass: repeat.result.rps / create.result.rps >= 1.5 && repeat.result.non2xx === 0,
      notes: `p50 ${repeat.result.p50} ms, p99 ${repeat.result.p99} ms`,
    });

    const rss = [...create.rss, ...update.rss, ...repeat.rss];
    const end = rss.at(-1) ?? api.rssMb();
    rows.push({
      scenario: "API memory under the PUT load",
      figure: end,
      unit: "MB RSS at end",
      baseline: rssAfterWarmup,
      baselineLabel: "RSS after warm-up",
      ratio: round(end / rssAfterWarmup, 2),
      target: "reported; flat (≤ 1.25× after warm-up)",
      pass: end <= rssAfterWarmup * 1.25,
      notes: `max ${Math.max(...rss)} MB over ${rss.length} samples`,
    });
  } finally {
    await api.stop();
  }
  return rows;
}
