import { describe, expect, test } from "bun:test";
import { buildSearchBody } from "./listing-search.ts";
import { encodeSearchCursor, parseSearchPage, parseSearchQuery } from "./search-params.ts";

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
      "Unknown query parameter colour; allowed: q, businessType, state, city, minPrice, maxPrice, minRevenue, maxRevenue, minSde, maxSde, financingAvailable, underContract, sort, cursor, limit",
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
    const { request, page, problems } = parseSearchPage(
      { minPrice: "$250,000", maxPrice: "1 000 000", utm_source: "mail", page: "3" },
      12,
    );
    expect(problems).toEqual([]);
    expect(request).toMatchObject({ minPrice: 250000, maxPrice: 1000000, limit: 12, from: 24, after: null });
    expect(page).toBe(3);
  });

  test("collects every problem with the field it belongs to, in words for buyers", () => {
    const { problems } = parseSearchPage(
      { minPrice: "cheap", minSde: "10", maxSde: "5", sort: "random", page: "0" },
      12,
    );
    expect(problems.map((p) => p.field)).toEqual(["sort", "minPrice", "minSde", "page"]);
    expect(problems.find((p) => p.field === "minSde")!.hint).toBe(
      "The lowest seller's discretionary earnings must not be above the highest.",
    );
    expect(problems.find((p) => p.field === "minPrice")!.hint).toBe("Enter an amount in dollars, e.g. 250000.");
  });

  test("pages beyond the search window are refused instead of failing in OpenSearch", () => {
    expect(parseSearchPage({ page: "833" }, 12).problems).toEqual([]);
    expect(parseSearchPage({ page: "834" }, 12).problems[0]!.field).toBe("page");
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
    expect(body.query.bool.filter).toContainEqual({ term: { businessType: "Restaurant" } });
    expect(body.query.bool.filter).toContainEqual({ range: { "financials.askingPrice": { gte: 1000 } } });
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
    expect(buildSearchBody(parseSearchPage({ page: "2" }, 12).request)).toMatchObject({ from: 12, size: 13 });
  });
});
