// Issue 41: search the way buyers look for businesses, against the real API, indexer, OpenSearch and marketplace:
// counts per business type, state and price band with every search (each facet without its own filter), SBA
// pre-qualification and real estate as flags, "within N miles/km of" a city or ZIP code (placed at index time from
// GeoNames and Census data, never revealing a hidden address), price cuts from the change history, "listed in the last
// N days", and every filter in the page's URL, kept when paging.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uniqueName } from "../../../test/support/env.ts";
import {
  deleteSearchIndex,
  indexedState,
  startIndexer,
  until,
  type IndexerHarness,
} from "../../indexer/test/support/indexer-harness.ts";
import { call, sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";

let api: ApiHarness;
let idx: IndexerHarness;
let partner: Partner;
let brokerId: string;
const partners = new Set<string>();
// Scoped by a token: other tests in this database write listings too.
const token = Math.random().toString(36).slice(2, 8);
const bakery = `Bakery ${token}`;
const cafe = `Cafe ${token}`;
const salon = `Salon ${token}`;
const byType = `businessType=${encodeURIComponent(bakery)}`;

const search = (query: string) => call(api.marketplaceUrl, "GET", `/v1/listings?${query}`);
const ids = (res: { body: any }) => (res.body.results as { serviceListingId: number }[]).map((r) => r.serviceListingId);
const refresh = () => idx.opensearch.indices.refresh({ index: idx.alias });

const austinZip = { city: "Austin", state: "TX", postalCode: "78701", country: "US", visibility: "SHOW_FULL_ADDRESS" };
const austinCity = { city: "Austin", state: "TX", country: "US", visibility: "SHOW_CITY_STATE" };
const dallas = { city: "Dallas", state: "TX", country: "US", visibility: "SHOW_CITY_STATE" };
const austinHidden = { city: "Austin", state: "TX", country: "US", visibility: "SHOW_STATE_ONLY" };
const portland = { city: "Portland", state: "OR", country: "US", visibility: "SHOW_CITY_STATE" };

async function listing(externalId: string, overrides: Record<string, unknown>): Promise<number> {
  // Every title carries the token: q=<token> finds this file's listings only.
  const body = sample.listing(brokerId, { title: `Business ${token} ${externalId}`, ...overrides });
  const res = await partner.put(`/partner/v1/listings/${externalId}`, body);
  expect([200, 201]).toContain(res.status);
  await indexedState(api.sql, res.body.serviceListingId);
  return res.body.serviceListingId;
}

const ex = {
  zip: uniqueName("zip"),
  city: uniqueName("city"),
  dallas: uniqueName("dallas"),
  hidden: uniqueName("hidden"),
  portland: uniqueName("portland"),
  cafe: uniqueName("cafe"),
  salon: uniqueName("salon"),
};
const id: Record<keyof typeof ex, number> = { zip: 0, city: 0, dallas: 0, hidden: 0, portland: 0, cafe: 0, salon: 0 };

beforeAll(async () => {
  idx = await startIndexer({ onlyPartners: partners });
  api = await startApi({ searchAlias: idx.alias });
  partner = await api.createPartner();
  partners.add(partner.partnerId);
  brokerId = uniqueName("broker");
  await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker());
  const rented = { propertyKind: "RENTED" };
  id.zip = await listing(ex.zip, {
    businessType: bakery,
    location: austinZip,
    financials: { askingPrice: 90_000 },
    financing: { financingAvailable: true, sbaPrequalified: true },
    property: { propertyKind: "OWNED", areaSqft: 2000 },
  });
  id.city = await listing(ex.city, {
    businessType: bakery,
    location: austinCity,
    financials: { askingPrice: 300_000 },
    financing: { sbaPrequalified: false },
    property: rented,
  });
  id.dallas = await listing(ex.dallas, {
    businessType: bakery,
    location: dallas,
    financials: { askingPrice: 320_000 },
    financing: { sbaPrequalified: true },
    property: rented,
  });
  id.hidden = await listing(ex.hidden, {
    businessType: bakery,
    location: austinHidden,
    financials: { askingPrice: 1_200_000 },
    property: rented,
  });
  id.portland = await listing(ex.portland, {
    businessType: bakery,
    location: portland,
    financials: { askingPrice: 6_000_000 },
    property: { propertyKind: "OWNED" },
  });
  id.cafe = await listing(ex.cafe, { businessType: cafe, location: austinZip, financials: { askingPrice: 150_000 } });
  id.salon = await listing(ex.salon, { businessType: salon, location: portland, financials: { askingPrice: 80_000 } });
  await refresh();
}, 120_000);

afterAll(async () => {
  await idx?.stop();
  await api?.stop();
  await deleteSearchIndex(idx.alias);
});

describe("facets with every search", () => {
  test("counts per business type, state and price band, each without its own filter", async () => {
    const res = await search(`q=${token}&state=TX&businessType=${encodeURIComponent(bakery)}`);
    expect(res.status).toBe(200);
    expect(ids(res).sort()).toEqual([id.zip, id.city, id.dallas, id.hidden].sort());
    const { facets } = res.body;
    // Business types in Texas (the business type filter left out): 4 bakeries, 1 cafe; not the Oregon salon.
    expect(facets.businessType).toEqual([
      { value: bakery, count: 4 },
      { value: cafe, count: 1 },
    ]);
    // States of bakeries (the state filter left out): Texas 4, Oregon 1.
    expect(facets.state).toEqual([
      { value: "TX", count: 4 },
      { value: "OR", count: 1 },
    ]);
    // Price bands of Texan bakeries: 90k, 300k, 320k, 1.2M; every band listed, in order.
    expect(facets.priceBand.map((b: any) => [b.from, b.below, b.count])).toEqual([
      [0, 100_000, 1],
      [100_000, 250_000, 0],
      [250_000, 500_000, 2],
      [500_000, 1_000_000, 0],
      [1_000_000, 2_500_000, 1],
      [2_500_000, 5_000_000, 0],
      [5_000_000, null, 0],
    ]);
  });

  test("a price filter narrows the hits and the other facets, not the price bands", async () => {
    const res = await search(`q=${token}&minPrice=250000&maxPrice=499999.99`);
    expect(ids(res).sort()).toEqual([id.city, id.dallas].sort());
    expect(res.body.facets.businessType).toEqual([{ value: bakery, count: 2 }]);
    expect(res.body.facets.priceBand.find((b: any) => b.from === 0).count).toBe(2); // the 90k bakery, the 80k salon
  });
});

describe("flags the listings' fields support", () => {
  test("SBA pre-qualified and real estate included (property OWNED), true or false", async () => {
    expect(ids(await search(`${byType}&sbaPrequalified=true`)).sort()).toEqual([id.zip, id.dallas].sort());
    expect(ids(await search(`${byType}&sbaPrequalified=false`)).sort()).toEqual(
      [id.city, id.hidden, id.portland].sort(),
    );
    expect(ids(await search(`${byType}&realEstateIncluded=true`)).sort()).toEqual([id.zip, id.portland].sort());
    expect(ids(await search(`${byType}&realEstateIncluded=false`)).sort()).toEqual(
      [id.city, id.dallas, id.hidden].sort(),
    );
  });
});

describe("distance", () => {
  test("within 25 miles of Austin, TX: the ZIP-placed and the city-placed listings; not Dallas, never the hidden address", async () => {
    const res = await search(`${byType}&near=${encodeURIComponent("Austin, TX")}&radius=25`);
    expect(res.status).toBe(200);
    expect(ids(res).sort()).toEqual([id.zip, id.city].sort());
  });

  test("from a ZIP code, in km; 200 miles from Dallas reaches Austin (293 km) but not Portland", async () => {
    expect(ids(await search(`${byType}&near=78701&radius=5&radiusUnit=km`)).sort()).toEqual([id.zip, id.city].sort());
    expect(ids(await search(`${byType}&near=${encodeURIComponent("Dallas, Texas")}&radius=200`)).sort()).toEqual(
      [id.zip, id.city, id.dallas].sort(),
    );
    expect(ids(await search(`${byType}&near=${encodeURIComponent("Dallas, TX")}&radius=100&radiusUnit=km`))).toEqual([
      id.dallas,
    ]);
  });

  test("an unknown place or a radius without a place is a 400 in the error shape", async () => {
    const unknown = await search(`near=Xyzzyville`);
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ status: "error", error: expect.stringContaining("no known place") });
    expect((await search(`radius=10`)).body.error).toBe("radius and radiusUnit need near (the place to measure from)");
  });
});

describe("newest first, listed in the last N days, price reduced", () => {
  test("a price cut shows as a badge and matches priceReduced=true; raised above the old price again, it does not", async () => {
    const external = uniqueName("cut");
    const body = { businessType: salon, location: portland, financials: { askingPrice: 500_000 } };
    const cut = await listing(external, body);
    expect((await search(`q=${token}&priceReduced=true`)).body.results).toEqual([]);
    await listing(external, { ...body, financials: { askingPrice: 450_000 } });
    await refresh();
    const reduced = await search(`q=${token}&priceReduced=true`);
    expect(ids(reduced)).toEqual([cut]);
    expect(reduced.body.results[0].priceReduced).toBe(true);
    expect((await call(api.marketplaceUrl, "GET", `/v1/listings/${cut}`)).body.listing.priceReduced).toBe(true);
    const page = await (await fetch(`${api.marketplaceUrl}/listings/${cut}`)).text();
    expect(page).toContain('<span class="badge reduced">Price reduced</span>');
    expect(ids(await search(`q=${token}&priceReduced=false`))).not.toContain(cut);
    await listing(external, { ...body, financials: { askingPrice: 520_000 } });
    await refresh();
    expect(ids(await search(`q=${token}&priceReduced=true`))).toEqual([]);
    expect((await call(api.marketplaceUrl, "GET", `/v1/listings/${cut}`)).body.listing.priceReduced).toBe(false);
  });

  test("listed in the last N days counts from when the listing went live; newest first by the same date", async () => {
    // The cafe went live 40 days ago (history moved back), then was written again so the index takes the date.
    await api.sql`UPDATE listings SET created_at = now() - interval '40 days' WHERE id = ${id.cafe}`;
    await api.sql`UPDATE listing_status_history SET changed_at = now() - interval '40 days' WHERE listing_id = ${id.cafe}`;
    await listing(ex.cafe, { businessType: cafe, location: austinZip, financials: { askingPrice: 151_000 } });
    await refresh();
    expect(ids(await search(`q=${token}&listedWithinDays=30&businessType=${encodeURIComponent(cafe)}`))).toEqual([]);
    expect(ids(await search(`q=${token}&listedWithinDays=41&businessType=${encodeURIComponent(cafe)}`))).toEqual([
      id.cafe,
    ]);
    const newest = ids(await search(`q=${token}&sort=newest&limit=50`));
    expect(newest.at(-1)).toBe(id.cafe);
  });
});

describe("the search page", () => {
  test("counts beside the filters, every filter in the URL and kept when paging, the place and the data's attribution", async () => {
    const query = `near=${encodeURIComponent("Austin, TX")}&radius=400&businessType=${encodeURIComponent(bakery)}&sbaPrequalified=true&listedWithinDays=7`;
    const res = await fetch(`${api.marketplaceUrl}/listings?${query}`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('<aside class="facets"');
    expect(html).toContain(`${bakery}</strong> <span class="muted">(2)</span>`);
    expect(html).toContain("Measured from Austin, TX.");
    expect(html).toContain("GeoNames");
    expect(html).toContain("CC BY 4.0");
    // A facet link keeps every other filter and sets its own.
    const stateLink = /href="(\/listings\?[^"]*state=TX[^"]*)"/.exec(html)?.[1]?.replaceAll("&amp;", "&");
    expect(stateLink).toBeDefined();
    const kept = new URL(stateLink!, "http://x").searchParams;
    expect([kept.get("near"), kept.get("radius"), kept.get("sbaPrequalified"), kept.get("listedWithinDays")]).toEqual([
      "Austin, TX",
      "400",
      "true",
      "7",
    ]);
    // The canonical link (and so a pager's) carries the whole search.
    const canonical = /<link rel="canonical" href="([^"]+)"/.exec(html)?.[1]?.replaceAll("&amp;", "&");
    expect(new URL(canonical!).searchParams.get("sbaPrequalified")).toBe("true");
    expect(new URL(canonical!).searchParams.get("near")).toBe("Austin, TX");
  });

  test("an unknown place is shown beside its field, the other filters kept in the form", async () => {
    const res = await fetch(`${api.marketplaceUrl}/listings?near=Xyzzyville&sbaPrequalified=true`);
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain('id="near-error"');
    expect(html).toContain("We do not know this place.");
    expect(html).toMatch(/id="sbaPrequalified" name="sbaPrequalified" value="true" checked/);
  });
});

test("the index places listings from their public address only", async () => {
  const placed = await until("the documents", async () => {
    const res = await idx.opensearch.mget({
      index: idx.alias,
      body: { ids: [String(id.zip), String(id.city), String(id.hidden)] },
    });
    const docs = (res.body as { docs: { _source?: { geo?: unknown } }[] }).docs;
    return docs.every((d) => d._source) ? docs.map((d) => d._source!.geo ?? null) : null;
  });
  expect(placed[0]).toMatchObject({ lat: expect.closeTo(30.27, 1), lon: expect.closeTo(-97.74, 1) });
  expect(placed[1]).toMatchObject({ lat: expect.closeTo(30.27, 1) });
  expect(placed[2]).toBeNull();
});
