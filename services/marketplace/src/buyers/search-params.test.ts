import { describe, expect, test } from "bun:test";
import { buildSearchBody } from "./listing-search.ts";
import { encodeSearchCursor, parseSearchQuery as parseQuery, type FindPlace } from "./search-params.ts";
import { parseSearchPage as parsePage } from "./search-params.ts";

/** A gazetteer that knows one city and one ZIP code (the real one is @pss/geo's, tested there). */
const findPlace: FindPlace = (text) =>
  text.toLowerCase() === "austin, tx"
    ? { point: { lat: 30.27, lon: -97.74 }, label: "Austin, TX" }
    : text === "78701"
      ? { point: { lat: 30.27, lon: -97.74 }, label: "ZIP 78701" }
      : null;
const parseSearchQuery = (query: Record<string, unknown>) => parseQuery(query, findPlace);

const bad = (query: Record<string, unknown>) => {
  try {
    parseSearchQuery(query);
  } catch (err) {
    return { status: (err as { status: number }).status, message: (err as Error).message };
  }
  throw new Error("expected a 400");
};

describe("parseSearchQuery", () => {
  test("defaults: newest first without q, relevance with q, 20 per page", () => {
    expect(parseSearchQuery({})).toMatchObject({ q: null, sort: "newest", limit: 20, after: null });
    expect(parseSearchQuery({ q: " bakery " })).toMatchObject({ q: "bakery", sort: "relevance" });
    expect(parseSearchQuery({ sort: "relevance" }).sort).toBe("newest");
  });

  test("reads filters, prices and an explicit sort", () => {
    expect(
      parseSearchQuery({
        businessType: "Restaurant",
        state: "TX",
        city: "Austin",
        minPrice: "100000",
        maxPrice: "250000.50",
        sort: "price_desc",
        limit: "50",
      }),
    ).toEqual({
      q: null,
      businessType: "Restaurant",
      state: "TX",
      city: "Austin",
      minPrice: 100000,
      maxPrice: 250000.5,
      minRevenue: null,
      maxRevenue: null,
      minSde: null,
      maxSde: null,
      financingAvailable: null,
      underContract: null,
      sbaPrequalified: null,
      realEstateIncluded: null,
      priceReduced: null,
      listedWithinDays: null,
      near: null,
      sort: "price_desc",
      limit: 50,
      after: null,
    });
  });

  test("refuses bad input with a sentence naming the parameter", () => {
    expect(bad({ minPrice: "cheap" })).toEqual({
      status: 400,
      message: "minPrice must be a non-negative number up to 1000000000000, e.g. 250000",
    });
    expect(bad({ maxPrice: "-5" }).message).toStartWith("maxPrice must be");
    expect(bad({ minPrice: "10", maxPrice: "5" }).message).toBe("minPrice must not be greater than maxPrice");
    expect(bad({ sort: "cheapest" }).message).toBe("sort must be one of relevance, newest, price_asc, price_desc");
    for (const limit of ["0", "51", "1.5", "ten"])
      expect(bad({ limit }).message).toBe("limit must be an integer from 1 to 50");
    expect(bad({ colour: "red" }).message).toBe(
      "Unknown query parameter colour; allowed: q, businessType, state, city, minPrice, maxPrice, minRevenue, maxRevenue, minSde, maxSde, financingAvailable, underContract, sbaPrequalified, realEstateIncluded, priceReduced, listedWithinDays, near, radius, radiusUnit, sort, cursor, limit",
    );
    expect(bad({ state: ["TX", "CA"] }).message).toBe("state may be given once");
    expect(bad({ q: "x".repeat(201) }).message).toBe("q must be at most 200 characters");
  });

  test("a cursor continues only the search it came from", () => {
    const request = parseSearchQuery({ q: "bakery", state: "TX" });
    const cursor = encodeSearchCursor(request, [1.5, 42]);
    expect(parseSearchQuery({ q: "bakery", state: "tx", cursor }).after).toEqual([1.5, 42]);
    expect(bad({ q: "bakery", state: "CA", cursor }).message).toBe(
      "cursor belongs to a different search; keep q, filters and sort unchanged while paging",
    );
    expect(bad({ cursor: "not-a-cursor" }).message).toBe(
      "cursor is not valid; pass nextCursor from the previous page unchanged",
    );
    expect(bad({ cursor: Buffer.from(JSON.stringify({ f: "x", a: [{}] })).toString("base64url") }).message).toStartWith(
      "cursor is not valid",
    );
  });
});

describe("revenue, SDE, financing and under-contract filters", () => {
  test("are read like the price range and refused with the same kind of sentence", () => {
    expect(
      parseSearchQuery({ minRevenue: "500000", maxSde: "200000", financingAvailable: "true", underContract: "false" }),
    ).toMatchObject({
      minRevenue: 500000,
      maxRevenue: null,
      minSde: null,
      maxSde: 200000,
      financingAvailable: true,
      underContract: false,
    });
    expect(bad({ minSde: "lots" }).message).toBe(
      "minSde must be a non-negative number up to 1000000000000, e.g. 250000",
    );
    expect(bad({ minRevenue: "9", maxRevenue: "1" }).message).toBe("minRevenue must not be greater than maxRevenue");
    expect(bad({ underContract: "yes" }).message).toBe("underContract must be true or false");
  });

  test("a cursor from before these filters existed still continues its search", () => {
    const request = parseSearchQuery({ q: "bakery" });
    const cursor = encodeSearchCursor(request, [2, 7]);
    expect(parseSearchQuery({ q: "bakery", cursor }).after).toEqual([2, 7]);
    expect(bad({ q: "bakery", underContract: "true", cursor }).message).toStartWith(
      "cursor belongs to a different search",
    );
  });
});

describe("parseSearchPage (the HTML search form)", () => {
  test("reads amounts as people type them, ignores parameters it does not know and pages by number", () => {
    const { request, page, problems } = parsePage(
      { minPrice: "$250,000", maxPrice: "1 000 000", utm_source: "mail", page: "3" },
      12,
      findPlace,
    );
    expect(problems).toEqual([]);
    expect(request).toMatchObject({ minPrice: 250000, maxPrice: 1000000, limit: 12, from: 24, after: null });
    expect(page).toBe(3);
  });

  test("collects every problem with the field it belongs to, in words for buyers", () => {
    const { problems } = parsePage(
      { minPrice: "cheap", minSde: "10", maxSde: "5", sort: "random", page: "0" },
      12,
      findPlace,
    );
    expect(problems.map((p) => p.field)).toEqual(["sort", "minPrice", "minSde", "page"]);
    expect(problems.find((p) => p.field === "minSde")!.hint).toBe(
      "The lowest seller's discretionary earnings must not be above the highest.",
    );
    expect(problems.find((p) => p.field === "minPrice")!.hint).toBe("Enter an amount in dollars, e.g. 250000.");
  });

  test("pages beyond the search window are refused instead of failing in OpenSearch", () => {
    expect(parsePage({ page: "833" }, 12, findPlace).problems).toEqual([]);
    expect(parsePage({ page: "834" }, 12, findPlace).problems[0]!.field).toBe("page");
  });
});

describe("buildSearchBody", () => {
  test("full text over title (boosted) and description, exact filters, price range, tiebreaker sort", () => {
    const body = buildSearchBody(
      parseSearchQuery({ q: "bakery", businessType: "Restaurant", minPrice: "1000", sort: "price_asc", limit: "10" }),
    );
    expect(body.size).toBe(11);
    expect(body.query.bool.must).toEqual([
      { multi_match: { query: "bakery", fields: ["title^2", "description"], type: "cross_fields", operator: "and" } },
    ]);
    // The facets' own filters narrow the hits after the counts: each facet counts without its own filter.
    expect(body.post_filter?.bool.filter).toContainEqual({ term: { businessType: "Restaurant" } });
    expect(body.post_filter?.bool.filter).toContainEqual({ range: { "financials.askingPrice": { gte: 1000 } } });
    expect(body.sort).toEqual([
      { "financials.askingPrice": { order: "asc", missing: "_last" } },
      { serviceListingId: "asc" },
    ]);
  });

  test("only buyer-visible listings, revenue and SDE ranges, financing and under-contract as exact flags", () => {
    const body = buildSearchBody(
      parseSearchQuery({ minRevenue: "1", maxSde: "9", financingAvailable: "false", underContract: "true" }),
    );
    expect(body.query.bool.filter).toContainEqual({
      terms: { status: ["FOR_SALE", "REVIEWING_OFFERS", "PENDING_CONTRACT", "UNDER_CONTRACT"] },
    });
    expect(body.query.bool.filter).toContainEqual({ range: { "financials.revenue": { gte: 1 } } });
    expect(body.query.bool.filter).toContainEqual({ range: { "financials.sde": { lte: 9 } } });
    expect(body.query.bool.filter).toContainEqual({ term: { underContract: true } });
    // "Not offered" also matches documents indexed before the field existed.
    expect(body.query.bool.must_not).toEqual([{ term: { financingAvailable: true } }]);
    expect(buildSearchBody(parsePage({ page: "2" }, 12, findPlace).request)).toMatchObject({ from: 12, size: 13 });
  });
});

describe("issue 41's filters", () => {
  test("SBA pre-qualification, real estate and price cuts as flags; listed in the last N days", () => {
    const r = parseSearchQuery({
      sbaPrequalified: "true",
      realEstateIncluded: "false",
      priceReduced: "true",
      listedWithinDays: "7",
    });
    expect(r).toMatchObject({
      sbaPrequalified: true,
      realEstateIncluded: false,
      priceReduced: true,
      listedWithinDays: 7,
    });
    const body = buildSearchBody(r);
    expect(body.query.bool.filter).toContainEqual({ term: { sbaPrequalified: true } });
    expect(body.query.bool.filter).toContainEqual({ range: { priceReducedAt: { gte: "now-30d" } } });
    expect(body.query.bool.filter).toContainEqual({ range: { listedAt: { gte: "now-7d" } } });
    // "Not included" also matches documents indexed before the field existed.
    expect(body.query.bool.must_not).toEqual([{ term: { realEstateIncluded: true } }]);
    expect(buildSearchBody(parseSearchQuery({ priceReduced: "false" })).query.bool.must_not).toEqual([
      { range: { priceReducedAt: { gte: "now-30d" } } },
    ]);
  });

  test("within N miles or km of a place: a geo_distance filter in metres from the place's point", () => {
    const miles = parseSearchQuery({ near: " Austin, TX ", radius: "10" });
    expect(miles.near).toMatchObject({ text: "Austin, TX", radius: 10, unit: "mi", place: { label: "Austin, TX" } });
    expect(buildSearchBody(miles).query.bool.filter).toContainEqual({
      geo_distance: { distance: "16093m", geo: { lat: 30.27, lon: -97.74 } },
    });
    const km = parseSearchQuery({ near: "78701", radius: "5", radiusUnit: "km" });
    expect(km.near?.radiusKm).toBe(5);
    // Without a radius: 25 miles.
    expect(parseSearchQuery({ near: "78701" }).near?.radius).toBe(25);
  });

  test("bad values get the same clear answers as the other filters", () => {
    expect(bad({ near: "Atlantis" }).message).toStartWith("near: no known place is called 'Atlantis'");
    expect(bad({ radius: "10" }).message).toBe("radius and radiusUnit need near (the place to measure from)");
    expect(bad({ near: "78701", radius: "0" }).message).toBe("radius must be a number from 1 to 500");
    expect(bad({ near: "78701", radius: "501" }).message).toBe("radius must be a number from 1 to 500");
    expect(bad({ near: "78701", radiusUnit: "leagues" }).message).toBe("radiusUnit must be one of mi, km");
    for (const listedWithinDays of ["0", "366", "7.5", "week"])
      expect(bad({ listedWithinDays }).message).toBe("listedWithinDays must be an integer from 1 to 365");
    expect(bad({ sbaPrequalified: "yes" }).message).toBe("sbaPrequalified must be true or false");
    const page = parsePage({ near: "Nowhere", radius: "x" }, 12, findPlace);
    expect(page.problems.map((p) => p.field)).toEqual(["radius"]);
    expect(parsePage({ near: "Nowhere" }, 12, findPlace).problems[0]!.hint).toStartWith("We do not know this place.");
  });

  test("facets: each counts with every filter but its own; every price band is counted", () => {
    const body = buildSearchBody(parseSearchQuery({ businessType: "Bakery", state: "OR", maxPrice: "500000" }));
    const within = (agg: { filter: { bool: { filter: unknown[] } } }) => agg.filter.bool.filter;
    expect(within(body.aggs.businessType)).toEqual([
      { term: { "location.state": "OR" } },
      { range: { "financials.askingPrice": { lte: 500000 } } },
    ]);
    expect(within(body.aggs.state)).toEqual([
      { term: { businessType: "Bakery" } },
      { range: { "financials.askingPrice": { lte: 500000 } } },
    ]);
    expect(within(body.aggs.priceBand)).toEqual([
      { term: { businessType: "Bakery" } },
      { term: { "location.state": "OR" } },
    ]);
    expect(body.aggs.priceBand.aggs.bands.range.ranges.at(-1)).toEqual({ from: 5_000_000 });
  });

  test("a cursor belongs to its filters; cursors handed out before these filters existed stay valid", () => {
    const plain = parseSearchQuery({ q: "cafe" });
    const cursor = encodeSearchCursor(plain, [1.5, 9]);
    expect(parseSearchQuery({ q: "cafe", cursor }).after).toEqual([1.5, 9]);
    expect(bad({ q: "cafe", cursor, sbaPrequalified: "true" }).message).toBe(
      "cursor belongs to a different search; keep q, filters and sort unchanged while paging",
    );
    const near = parseSearchQuery({ q: "cafe", near: "78701" });
    const nearCursor = encodeSearchCursor(near, [1, 2]);
    expect(parseSearchQuery({ q: "cafe", near: "78701", cursor: nearCursor }).after).toEqual([1, 2]);
    expect(bad({ q: "cafe", near: "78701", radius: "50", cursor: nearCursor }).status).toBe(400);
  });
});
