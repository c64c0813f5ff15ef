// The cost curve: PUT create throughput and p99 at 10 k, 100 k and 1 M stored listings, and at 1, 8 and 50
// photos per listing. The cost of a write should not grow with the table. The table's size is what the bench
// database holds plus seed rows (removed afterwards); every run removes the listings it wrote itself
// (bench/lib/context.ts), so the 10 k point is 10 k unless something else filled the database.
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

/** Listings in the table now. */
async function tableSize(ctx: BenchContext): Promise<number> {
  const [{ n }] = (await ctx.sql`SELECT count(*)::int AS n FROM listings`) as unknown as [{ n: number }];
  return n;
}

const SIZES = [10_000, 100_000, 1_000_000];
const PHOTO_COUNTS = [1, 8, 50];
/** 1 M stored listings vs 10 k: a write's cost must not grow with the table. */
const TABLE_TARGET = 0.9;

export async function putScaling(ctx: BenchContext): Promise<Row[]> {
  const rows: Row[] = [];
  const prefix = `scale-${Date.now().toString(36)}`;
  const measure = async (label: string, bodyOptions?: { descriptionLength?: number; photos?: number }) => {
    const api = await startApiProcess({ ...ctx.urls, DATABASE_POOL_SIZE: "32" });
    try {
      const common = {
        url: api.url,
        key: ctx.partner.apiKey,
        broker: ctx.brokerExternalId,
        connections: 32,
        bodyOptions,
      };
      await runLoad({
        ...common,
        mode: "new",
        prefix: `${prefix}-${label}-warm`,
        offset: 0,
        durationSeconds: ctx.warmupSeconds,
      });
      return await runLoad({
        ...common,
        mode: "new",
        prefix: `${prefix}-${label}`,
        offset: 0,
        durationSeconds: ctx.durationSeconds,
      });
    } finally {
      await api.stop();
    }
  };

  // The cost curve over the table size: seed up to each size, measure creates there.
  await removeSeed(ctx);
  const bySize: { size: number; rps: number; p99: number }[] = [];
  for (const size of SIZES) {
    await ensureTableSize(ctx, size);
    await ctx.sql`CHECKPOINT`;
    const stored = await tableSize(ctx);
    const r = await measure(`size-${size}`);
    bySize.push({ size: stored, rps: r.rps, p99: r.p99 });
  }
  await removeSeed(ctx);
  const small = bySize[0]!;
  for (const point of bySize) {
    const isLast = point === bySize.at(-1);
    rows.push({
      scenario: `PUT listing creates with ${point.size.toLocaleString("en-US")} stored listings`,
      figure: round(point.rps),
      unit: "req/s",
      baseline: round(small.rps),
      baselineLabel: `${small.size.toLocaleString("en-US")} stored, same run`,
      ratio: round(point.rps / small.rps, 2),
      target: isLast ? `≥ ${TABLE_TARGET}` : "reported",
      pass: isLast ? point.rps / small.rps >= TABLE_TARGET : null,
      notes: `p99 ${point.p99} ms (${small.p99} ms at ${small.size.toLocaleString("en-US")})`,
    });
  }

  // The cost curve over photos per listing (the description stays at its usual 1,500 characters).
  const byPhotos: { photos: number; rps: number; p99: number; kb: string }[] = [];
  for (const photos of PHOTO_COUNTS) {
    const r = await measure(`photos-${photos}`, { photos });
    byPhotos.push({
      photos,
      rps: r.rps,
      p99: r.p99,
      kb: (JSON.stringify(listingBody("bench-broker", 123456, { photos })).length / 1024).toFixed(1),
    });
  }
  const eight = byPhotos.find((p) => p.photos === 8)!;
  for (const point of byPhotos) {
    rows.push({
      scenario: `PUT listing creates with ${point.photos} photo${point.photos === 1 ? "" : "s"} (${point.kb} KB bodies)`,
      figure: round(point.rps),
      unit: "req/s",
      baseline: round(eight.rps),
      baselineLabel: "8 photos, same run",
      ratio: round(point.rps / eight.rps, 2),
      target: "reported",
      pass: null,
      notes: `p99 ${point.p99} ms`,
    });
  }
  return rows;
}
