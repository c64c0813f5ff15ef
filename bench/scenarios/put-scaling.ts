// How PUT throughput changes with the number of stored listings (10 k vs 1 M) and with body size (1 KB vs
// 30 KB). The cost of a write should not grow with the table.
import type { BenchContext } from "../lib/context.ts";
import { listingBody } from "../lib/bodies.mjs";
import { runLoad, startApiProcess } from "../lib/processes.ts";
import { round, type Row } from "../lib/result.ts";

const SEED_PARTNER_NAME = "bench-table-size";

async function seedPartner(ctx: BenchContext): Promise<string> {
  const [found] = await ctx.sql`SELECT id FROM partners WHERE name = ${SEED_PARTNER_NAME}`;
  return (found ?? (await ctx.sql`INSERT INTO partners (name) VALUES (${SEED_PARTNER_NAME}) RETURNING id`)[0]!).id;
}

/** Removes the seed rows, so the next measurement (and the next run) sees the small table again. */
async function removeSeed(ctx: BenchContext): Promise<void> {
  await ctx.sql`DELETE FROM listings WHERE partner_id = ${await seedPartner(ctx)}`;
  await ctx.sql`VACUUM ANALYZE listings`;
}

/** Brings the listings table to at least `total` rows with seed rows. */
async function ensureTableSize(ctx: BenchContext, total: number): Promise<void> {
  const [{ n }] = (await ctx.sql`SELECT count(*)::int AS n FROM listings`) as unknown as [{ n: number }];
  if (n >= total) return;
  const partner = { id: await seedPartner(ctx) };
  const body = listingBody("seed", 0);
  const missing = total - n;
  console.error(`bench: seeding ${missing} listings (once)`);
  for (let done = 0; done < missing; done += 200_000) {
    const batch = Math.min(200_000, missing - done);
    await ctx.sql`
      INSERT INTO listings (partner_id, external_id, broker_id, status, business_type, title, description, city, state, country, visibility, financials, content_hash)
      SELECT ${partner!.id}, 'seed-' || ${Date.now()}::text || '-' || g, ${ctx.brokerId}, 'FOR_SALE', 'Retail', ${body.title}, ${body.description},
             'Austin', 'TX', 'US', 'SHOW_CITY_STATE', ${ctx.sql.json(body.financials)}, '\\x00'
      FROM generate_series(1, ${batch}) g`;
  }
  await ctx.sql`ANALYZE listings`;
}

export async function putScaling(ctx: BenchContext): Promise<Row[]> {
  const rows: Row[] = [];
  const prefix = `scale-${Date.now().toString(36)}`;
  const measure = async (label: string, bodyOptions?: { descriptionLength?: number; photos?: number }) => {
    const api = await startApiProcess({ ...ctx.urls, DATABASE_POOL_SIZE: "32" });
    try {
      const common = { url: api.url, key: ctx.partner.apiKey, broker: ctx.brokerExternalId, connections: 32, bodyOptions };
      await runLoad({ ...common, mode: "new", prefix: `${prefix}-${label}-warm`, offset: 0, durationSeconds: ctx.warmupSeconds });
      return await runLoad({ ...common, mode: "new", prefix: `${prefix}-${label}`, offset: 0, durationSeconds: ctx.durationSeconds });
    } finally {
      await api.stop();
    }
  };

  await removeSeed(ctx);
  const [{ n: existing }] = (await ctx.sql`SELECT count(*)::int AS n FROM listings`) as unknown as [{ n: number }];
  const small = await measure("small-table");
  await ensureTableSize(ctx, 1_000_000);
  const large = await measure("large-table");
  await removeSeed(ctx);
  rows.push({
    scenario: "PUT listing creates: 1 M stored listings vs the small table",
    figure: round(large.rps),
    unit: "req/s",
    baseline: round(small.rps),
    baselineLabel: `same run with ${existing} stored`,
    ratio: round(large.rps / small.rps, 2),
    target: "≈ 1 (cost does not grow with the table)",
    pass: large.rps / small.rps >= 0.8,
    notes: `p99 ${small.p99} ms → ${large.p99} ms`,
  });

  const kb1 = await measure("1kb", { descriptionLength: 100, photos: 1 });
  const kb30 = await measure("30kb", { descriptionLength: 20_000, photos: 50 });
  const size = (o: { descriptionLength: number; photos: number }) => (JSON.stringify(listingBody("bench-broker", 123456, o)).length / 1024).toFixed(1);
  rows.push({
    scenario: `PUT listing creates: ${size({ descriptionLength: 20_000, photos: 50 })} KB vs ${size({ descriptionLength: 100, photos: 1 })} KB bodies`,
    figure: round(kb30.rps),
    unit: "req/s",
    baseline: round(kb1.rps),
    baselineLabel: "small bodies, same run",
    ratio: round(kb30.rps / kb1.rps, 2),
    target: "reported",
    pass: null,
    notes: `p99 ${kb1.p99} ms → ${kb30.p99} ms`,
  });
  return rows;
}
