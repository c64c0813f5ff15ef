// Issue 41's two figures for the marketplace as its own service.
// 1. Buyers' search with facets and a distance filter (`GET /v1/listings?...&near=...&radius=...`) on
//    BENCH_SEARCH_LISTINGS listings (default 100,000), p50/p99 at 50 % of its saturation, beside a bare OpenSearch
//    query of the very same body (the marketplace's buildSearchBody, sent to `_search` directly) in the same run:
//    target ≥ 0.7 of the bare query's throughput, p99 ≤ 50 ms at 50 %.
// 2. Partner PUT p99 (open loop, a fixed rate) alone and while buyers saturate the marketplace: target within 20 %.
// The listings are seed rows (SQL, removed afterwards) indexed by the indexer's own reindex into an alias of this
// run; the marketplace process reads that alias.
import { Client } from "@opensearch-project/opensearch";
import { silentLogger } from "@pss/service-kit";
import { createGazetteer } from "../../packages/geo/src/index.ts";
import { reindex } from "../../services/indexer/src/reindex/reindex.ts";
import { buildSearchBody } from "../../services/marketplace/src/buyers/listing-search.ts";
import { parseSearchQuery } from "../../services/marketplace/src/buyers/search-params.ts";
import type { BenchContext } from "../lib/context.ts";
import { runLoad, runOpenLoop, startApiProcess, startMarketplaceProcess } from "../lib/processes.ts";
import { round, type Row } from "../lib/result.ts";

const TYPES = ["Restaurant", "Retail", "Manufacturing", "Services", "Automotive", "Health Care", "Construction"];
// Real places (the gazetteer places each listing from its public city and state), near and far from Austin.
const PLACES: [string, string][] = [
  ["Austin", "TX"],
  ["Round Rock", "TX"],
  ["San Marcos", "TX"],
  ["San Antonio", "TX"],
  ["Houston", "TX"],
  ["Dallas", "TX"],
  ["Denver", "CO"],
  ["Phoenix", "AZ"],
  ["Chicago", "IL"],
  ["Atlanta", "GA"],
  ["Seattle", "WA"],
  ["Miami", "FL"],
];
/** The buyer's search: facets come with every search; a distance, a price range and a flag narrow it. */
const QUERY = {
  near: "Austin, TX",
  radius: "100",
  radiusUnit: "mi",
  minPrice: "100000",
  maxPrice: "2000000",
  sbaPrequalified: "true",
  sort: "newest",
};
const CONNECTIONS = 16;
const PUT_RATE = 40;

async function seed(ctx: BenchContext, n: number, tag: string): Promise<void> {
  const cities = PLACES.map((p) => p[0]);
  const states = PLACES.map((p) => p[1]);
  for (let done = 0; done < n; done += 50_000) {
    const batch = Math.min(50_000, n - done);
    await ctx.sql`
      INSERT INTO listings (partner_id, external_id, broker_id, status, business_type, title, description, city, state,
                            country, visibility, financials, property, financing, content_hash, published_at, created_at)
      SELECT ${ctx.partner.partnerId}, ${tag} || '-' || g, ${ctx.brokerId}, 'FOR_SALE', (${TYPES}::text[])[1 + g % ${TYPES.length}],
             'Bench business ' || g, 'An established business with trained staff, loyal customers and room to grow.',
             (${cities}::text[])[1 + g % ${cities.length}], (${states}::text[])[1 + g % ${states.length}], 'US', 'SHOW_CITY_STATE',
             jsonb_build_object('askingPrice', 50000 + (g * 7919) % 4950000, 'revenue', 100000 + (g * 104729) % 9900000,
                                'sde', 20000 + (g * 1299709) % 1980000),
             CASE WHEN g % 5 = 0 THEN '{"propertyKind":"OWNED"}'::jsonb ELSE '{"propertyKind":"LEASED"}'::jsonb END,
             jsonb_build_object('financingAvailable', g % 3 = 0, 'sbaPrequalified', g % 4 = 0),
             '\\x00', now() - (g % 90) * interval '1 day', now() - (g % 90) * interval '1 day'
      FROM generate_series(${done + 1}::bigint, ${done + batch}::bigint) g`;
  }
  await ctx.sql`ANALYZE listings`;
}

export async function marketplaceSearch(ctx: BenchContext): Promise<Row[]> {
  const listings = Number(process.env.BENCH_SEARCH_LISTINGS ?? 100_000);
  const tag = `bench-search-${Date.now()}`;
  const alias = `bench-search-${Date.now()}`;
  const opensearch = new Client({ node: ctx.urls.OPENSEARCH_URL });
  const rows: Row[] = [];
  console.error(`bench: marketplace-search: seeding and indexing ${listings} listings`);
  await seed(ctx, listings, tag);
  try {
    const indexed = await reindex({ sql: ctx.sql, opensearch, alias, logger: silentLogger, pageSize: 1000 });
    await opensearch.indices.refresh({ index: alias });
    console.error(`bench: marketplace-search: ${indexed.documents} documents in ${round(indexed.tookMs / 1000)} s`);

    const gazetteer = createGazetteer();
    const request = parseSearchQuery(QUERY, (text) => gazetteer.find(text));
    const bare = {
      url: ctx.urls.OPENSEARCH_URL,
      mode: "get" as const,
      // OpenSearch takes a search body as the `source` parameter of a GET: the same body, no marketplace.
      path: `/${alias}/_search?source_content_type=application/json&source=${encodeURIComponent(JSON.stringify(buildSearchBody(request)))}`,
      connections: CONNECTIONS,
    };
    const marketplace = await startMarketplaceProcess({ ...ctx.urls, OPENSEARCH_INDEX_ALIAS: alias });
    try {
      const path = `/v1/listings?${new URLSearchParams(QUERY)}`;
      const check = (await (await fetch(`${marketplace.url}${path}`)).json()) as {
        total: number;
        facets: { businessType: unknown[] };
      };
      if (!(check.total > 0) || check.facets.businessType.length === 0)
        throw new Error(`the search found nothing to measure: ${JSON.stringify(check).slice(0, 300)}`);
      const search = { url: marketplace.url, mode: "get" as const, path, connections: CONNECTIONS };
      await runLoad({ ...search, durationSeconds: ctx.warmupSeconds });
      const satMarket = await runLoad({ ...search, durationSeconds: ctx.durationSeconds });
      await runLoad({ ...bare, durationSeconds: ctx.warmupSeconds });
      const satBare = await runLoad({ ...bare, durationSeconds: ctx.durationSeconds });
      const halfMarket = await runLoad({
        ...search,
        rate: Math.max(1, Math.round(satMarket.rps / 2)),
        durationSeconds: ctx.durationSeconds,
      });
      const halfBare = await runLoad({
        ...bare,
        rate: Math.max(1, Math.round(satBare.rps / 2)),
        durationSeconds: ctx.durationSeconds,
      });
      const ratio = round(satMarket.rps / Math.max(satBare.rps, 0.001), 2);
      rows.push(
        {
          scenario: `buyer search with facets and distance, ${check.total} hits of ${indexed.documents} listings: throughput`,
          figure: round(satMarket.rps),
          unit: "req/s",
          baseline: round(satBare.rps),
          baselineLabel: "the same body sent to OpenSearch's _search directly",
          ratio,
          target: "≥ 0.7",
          pass: ratio >= 0.7 && satMarket.non2xx === 0 && satBare.non2xx === 0,
          notes: `saturated (${CONNECTIONS} connections): marketplace p50 ${satMarket.p50} ms p99 ${satMarket.p99} ms; bare p50 ${satBare.p50} ms p99 ${satBare.p99} ms; non-2xx ${satMarket.non2xx + satBare.non2xx}`,
        },
        {
          scenario: "buyer search with facets and distance: p99 at 50 % of saturation",
          figure: halfMarket.p99,
          unit: "ms",
          baseline: halfBare.p99,
          baselineLabel: "bare OpenSearch query at 50 % of its saturation",
          target: "≤ 50 ms",
          pass: halfMarket.p99 <= 50 && halfMarket.non2xx === 0,
          notes: `marketplace at ${round(halfMarket.rps)} req/s: p50 ${halfMarket.p50} ms, p99 ${halfMarket.p99} ms; bare at ${round(halfBare.rps)} req/s: p50 ${halfBare.p50} ms, p99 ${halfBare.p99} ms`,
        },
      );

      // --- partner writes with and without buyers saturating the marketplace -------------------------------------
      const api = await startApiProcess({ ...ctx.urls, OPENSEARCH_INDEX_ALIAS: alias });
      try {
        const puts = (label: string) =>
          runOpenLoop({
            url: api.url,
            key: ctx.partner.apiKey,
            broker: ctx.brokerExternalId,
            mode: "new",
            rate: PUT_RATE,
            durationSeconds: ctx.durationSeconds,
            prefix: `${tag}-puts-${label}`,
          });
        const alone = await puts("alone");
        const [withBuyers, buyers] = await Promise.all([
          puts("buyers"),
          runLoad({ ...search, connections: 32, durationSeconds: ctx.durationSeconds + 2 }),
        ]);
        const putRatio = round(withBuyers.p99 / Math.max(alone.p99, 0.001), 2);
        rows.push({
          scenario: `partner PUT p99 at ${PUT_RATE}/s while buyers saturate the marketplace`,
          figure: withBuyers.p99,
          unit: "ms",
          baseline: alone.p99,
          baselineLabel: "the same PUTs without buyers",
          ratio: putRatio,
          target: "≤ 1.2",
          pass: putRatio <= 1.2 && withBuyers.non2xx === 0 && alone.non2xx === 0,
          notes: `buyers: ${round(buyers.rps)} searches/s; PUT p50 ${withBuyers.p50} ms with buyers, ${alone.p50} ms alone; non-2xx ${withBuyers.non2xx + alone.non2xx}`,
        });
      } finally {
        await api.stop();
      }
    } finally {
      await marketplace.stop();
    }
  } finally {
    await fetch(`${ctx.urls.OPENSEARCH_URL}/${alias}-v*`, { method: "DELETE" }).catch(() => {});
    await ctx.sql`DELETE FROM listings WHERE partner_id = ${ctx.partner.partnerId} AND external_id LIKE ${`${tag}-%`}`;
    await opensearch.close();
  }
  return rows;
}
