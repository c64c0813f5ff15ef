import { PRICE_BANDS } from "@pss/contracts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uniqueName } from "../../../test/support/env.ts";
import {
  deleteSearchIndex,
  indexedState,
  startIndexer,
  type IndexerHarness,
} from "../../indexer/test/support/indexer-harness.ts";
import { call, sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";

let api: ApiHarness;
let idx: IndexerHarness;
let partner: Partner;
let brokerId: string;
// Other engineers' tests write listings at the same time: every query here is scoped by a unique token.
const token = Math.random().toString(36).slice(2, 8);
const kind = `Bakery ${token}`;
const state = `S${token}`.toUpperCase();

beforeAll(async () => {
  idx = await startIndexer();
  api = await startApi({ searchAlias: idx.alias });
  partner = await api.createPartner();
  brokerId = uniqueName("broker");
  await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker({ name: "Sam Seller" }));
}, 60_000);
afterAll(async () => {
  await idx?.stop();
  await api?.stop();
  await deleteSearchIndex(idx.alias);
});

const search = async (query: string) => call(api.marketplaceUrl, "GET", `/v1/listings?${query}`);
const ids = (res: { body: any }) => res.body.results.map((r: any) => r.serviceListingId);

async function listing(overrides: Record<string, unknown> = {}): Promise<number> {
  const body = sample.listing(brokerId, {
    businessType: kind,
    location: {
      streetAddress1: "9 Oven Street",
      city: "Austin",
      state,
      postalCode: "78701",
      country: "US",
      visibility: "SHOW_FULL_ADDRESS",
    },
    ...overrides,
  });
  const res = await partner.put(`/partner/v1/listings/${uniqueName("listing")}`, body);
  expect(res.status).toBe(201);
  await indexedState(api.sql, res.body.serviceListingId);
  return res.body.serviceListingId;
}

const refresh = () => idx.opensearch.indices.refresh({ index: idx.alias });

describe("GET /v1/listings", () => {
  let cheap: number, pricey: number, unpriced: number, hidden: number, stateOnly: number, titled: number;

  beforeAll(async () => {
    cheap = await listing({
      title: `Corner bakeries ${token}`,
      description: "Fresh bread every morning.",
      financials: { askingPrice: 100_000 },
    });
    pricey = await listing({
      title: `Wholesale bakery ${token}`,
      description: "Industrial ovens and delivery vans.",
      financials: { askingPrice: 900_000 },
    });
    unpriced = await listing({
      title: `Cupcake shop ${token}`,
      description: `A bakery ${token} with loyal regulars.`,
      financials: null,
    });
    stateOnly = await listing({
      title: `Hidden city bakery ${token}`,
      financials: { askingPrice: 300_000 },
      location: { city: "Austin", state, country: "US", visibility: "SHOW_STATE_ONLY" },
    });
    titled = await listing({
      title: `Sourdough ${token} kitchen`,
      description: "Bread.",
      financials: { askingPrice: 500_000 },
    });
    hidden = await listing({ title: `Sold bakery ${token}`, status: "SOLD" });
    await refresh();
  }, 60_000);

  test("full-text search uses the English analyzer: 'bakery' finds 'bakeries', and sold listings are never found", async () => {
    const res = await search(`q=${encodeURIComponent(`bakery ${token}`)}`);
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual(expect.arrayContaining([cheap, pricey, unpriced, stateOnly]));
    expect(ids(res)).not.toContain(hidden);
    expect(ids(res)).not.toContain(titled);
    expect(res.body.total).toBe(4);
  });

  test("a word in the title outranks the same word only in the description", async () => {
    const res = await search(`q=${encodeURIComponent(`cupcake bakery ${token}`)}`);
    expect(ids(res)[0]).toBe(unpriced);
    const titleVsDescription = await search(`q=${encodeURIComponent(`bakery ${token}`)}&sort=relevance`);
    // "bakery <token>" sits in the description of the cupcake shop only; the others carry it in the title.
    expect(ids(titleVsDescription).at(-1)).toBe(unpriced);
  });

  test("filters are exact and case-insensitive; a city filter never matches a listing that hides its city", async () => {
    expect((await search(`businessType=${encodeURIComponent(kind.toUpperCase())}`)).body.total).toBe(5);
    expect((await search(`state=${state.toLowerCase()}&businessType=${encodeURIComponent(kind)}`)).body.total).toBe(5);
    const byCity = await search(`city=austin&state=${state}`);
    expect(ids(byCity)).not.toContain(stateOnly);
    expect(byCity.body.total).toBe(4);
    const range = await search(`state=${state}&minPrice=200000&maxPrice=600000`);
    expect(ids(range).sort()).toEqual([stateOnly, titled].sort());
  });

  test("sorts by price either way (listings without a price last) and by newest", async () => {
    expect(ids(await search(`state=${state}&sort=price_asc`))).toEqual([cheap, stateOnly, titled, pricey, unpriced]);
    expect(ids(await search(`state=${state}&sort=price_desc`))).toEqual([pricey, titled, stateOnly, cheap, unpriced]);
    expect(ids(await search(`state=${state}`))).toEqual([titled, stateOnly, unpriced, pricey, cheap]);
  });

  test("cursor paging walks every result once, in order, and ends with nextCursor null", async () => {
    for (const sort of ["newest", "price_asc", "price_desc"]) {
      const all = ids(await search(`state=${state}&sort=${sort}`));
      const seen: number[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res: any = await search(`state=${state}&sort=${sort}&limit=2${cursor ? `&cursor=${cursor}` : ""}`);
        expect(res.status).toBe(200);
        expect(res.body.total).toBe(5);
        seen.push(...ids(res));
        cursor = res.body.nextCursor;
        pages++;
      } while (cursor && pages < 10);
      expect({ sort, seen }).toEqual({ sort, seen: all });
      expect(pages).toBe(3);
    }
  });

  test("results carry public fields only, with the address as the listing's visibility allows", async () => {
    const res = await search(`state=${state}&sort=price_asc&limit=50`);
    const byId = new Map(res.body.results.map((r: any) => [r.serviceListingId, r]));
    expect(byId.get(cheap)).toEqual({
      serviceListingId: cheap,
      serviceListingUrl: `https://market.example.test/listings/${cheap}`,
      title: `Corner bakeries ${token}`,
      businessType: kind,
      status: "FOR_SALE",
      underContract: false,
      location: {
        streetAddress1: "9 Oven Street",
        postalCode: "78701",
        city: "Austin",
        state,
        country: "US",
        visibility: "SHOW_FULL_ADDRESS",
      },
      financials: { askingPrice: 100_000 },
      excerpt: "Fresh bread every morning.",
      photo: null,
      broker: {
        serviceBrokerId: expect.any(String),
        name: "Sam Seller",
        serviceProfileUrl: expect.stringMatching(/^https:\/\/market\.example\.test\/brokers\/\d+$/),
      },
      listedAt: expect.any(String),
      // Issue 41: the badge (its price never went down).
      priceReduced: false,
    });
    expect((byId.get(stateOnly) as any).location).toEqual({ state, country: "US", visibility: "SHOW_STATE_ONLY" });
    expect(JSON.stringify(res.body)).not.toMatch(/jane\.broker|@example\.com|555 0100/);
  });

  test("a ready photo shows on its result (photos become ready after indexing)", async () => {
    const [photo] = await api.sql`SELECT id FROM listing_photos WHERE listing_id = ${cheap} ORDER BY sort_key LIMIT 1`;
    const key = `${"a".repeat(64)}.jpg`;
    await api.sql`UPDATE listing_photos SET state = 'ready', width = 1600, height = 1200, variants = ${api.sql.json([{ width: 640, height: 480, format: "jpeg", key }])} WHERE id = ${photo!.id}`;
    const res = await search(`state=${state}&sort=price_asc&limit=1`);
    expect(res.body.results[0].photo).toEqual({
      sortKey: 1,
      width: 1600,
      height: 1200,
      variants: [{ width: 640, height: 480, format: "jpeg", url: `https://market.example.test/media/${key}` }],
    });
  });

  test("an under-contract listing is found and flagged", async () => {
    const id = await listing({ title: `Contracted bakery ${token}`, status: "UNDER_CONTRACT" });
    await refresh();
    const res = await search(`q=contracted+${token}`);
    expect(res.body.results.map((r: any) => [r.serviceListingId, r.status, r.underContract])).toEqual([
      [id, "UNDER_CONTRACT", true],
    ]);
  });

  test("bad parameters get 400 in the error shape", async () => {
    for (const [query, error] of [
      ["limit=0", "limit must be an integer from 1 to 50"],
      ["limit=51", "limit must be an integer from 1 to 50"],
      ["minPrice=abc", "minPrice must be a non-negative number up to 1000000000000, e.g. 250000"],
      ["sort=popular", "sort must be one of relevance, newest, price_asc, price_desc"],
      ["colour=red", "Invalid query parameters: colour is not a known field"],
      ["cursor=%%%", "cursor is not valid; pass nextCursor from the previous page unchanged"],
      ["state=TX&state=CA", "state may be given once"],
    ]) {
      const res = await search(query!);
      expect({ query, status: res.status, body: res.body }).toEqual({
        query,
        status: 400,
        body: expect.objectContaining({ status: "error", error }),
      });
    }
  });

  test("search needs no API key", async () => {
    const res = await call(api.marketplaceUrl, "GET", `/v1/listings?state=${state}`, {
      headers: { authorization: "Bearer nonsense" },
    });
    expect(res.status).toBe(200);
  });
});

test("while OpenSearch is unreachable search answers 503 in the error shape; pages and partner writes still work", async () => {
  const down = await startApi({ searchAlias: idx.alias, opensearchUrl: "http://127.0.0.1:9", relay: false });
  try {
    const res = await call(down.marketplaceUrl, "GET", "/v1/listings?q=bakery");
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ status: "error", error: "Search is temporarily unavailable; please try again shortly" });
    expect(res.headers.get("retry-after")).toBe("5");
    const p = await down.createPartner();
    expect((await p.put(`/partner/v1/brokers/${uniqueName("broker")}`, sample.broker())).status).toBe(201);
  } finally {
    await down.stop();
  }
});

test("before the indexer ever ran (no index behind the alias) search answers an empty result", async () => {
  const fresh = await startApi({ searchAlias: uniqueName("never-created"), relay: false });
  try {
    expect((await call(fresh.marketplaceUrl, "GET", "/v1/listings")).body).toEqual({
      status: "success",
      total: 0,
      results: [],
      nextCursor: null,
      // Issue 41: the counts, all empty (every price band is listed).
      facets: {
        businessType: [],
        state: [],
        priceBand: PRICE_BANDS.map((band) => ({ ...band, count: 0 })),
      },
    });
  } finally {
    await fresh.stop();
  }
});
