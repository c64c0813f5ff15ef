import { describe, expect, test } from "bun:test";
import { buildSearchBody } from "./listing-search.ts";
import { encodeSearchCursor, parseSearchQuery } from "./search-params.ts";

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
    expect(parseSearchQuery({ businessType: "Restaurant", state: "TX", city: "Austin", minPrice: "100000", maxPrice: "250000.50", sort: "price_desc", limit: "50" })).toEqual({
      q: null,
      businessType: "Restaurant",
      state: "TX",
      city: "Austin",
      minPrice: 100000,
      maxPrice: 250000.5,
      sort: "price_desc",
      limit: 50,
      after: null,
    });
  });

  test("refuses bad input with a sentence naming the parameter", () => {
    expect(bad({ minPrice: "cheap" })).toEqual({ status: 400, message: "minPrice must be a non-negative number up to 1000000000000, e.g. 250000" });
    expect(bad({ maxPrice: "-5" }).message).toStartWith("maxPrice must be");
    expect(bad({ minPrice: "10", maxPrice: "5" }).message).toBe("minPrice must not be greater than maxPrice");
    expect(bad({ sort: "cheapest" }).message).toBe("sort must be one of relevance, newest, price_asc, price_desc");
    for (const limit of ["0", "51", "1.5", "ten"]) expect(bad({ limit }).message).toBe("limit must be an integer from 1 to 50");
    expect(bad({ colour: "red" }).message).toBe("Unknown query parameter colour; allowed: q, businessType, state, city, minPrice, maxPrice, sort, cursor, limit");
    expect(bad({ state: ["TX", "CA"] }).message).toBe("state may be given once");
    expect(bad({ q: "x".repeat(201) }).message).toBe("q must be at most 200 characters");
  });

  test("a cursor continues only the search it came from", () => {
    const request = parseSearchQuery({ q: "bakery", state: "TX" });
    const cursor = encodeSearchCursor(request, [1.5, 42]);
    expect(parseSearchQuery({ q: "bakery", state: "tx", cursor }).after).toEqual([1.5, 42]);
    expect(bad({ q: "bakery", state: "CA", cursor }).message).toBe("cursor belongs to a different search; keep q, filters and sort unchanged while paging");
    expect(bad({ cursor: "not-a-cursor" }).message).toBe("cursor is not valid; pass nextCursor from the previous page unchanged");
    expect(bad({ cursor: Buffer.from(JSON.stringify({ f: "x", a: [{}] })).toString("base64url") }).message).toStartWith("cursor is not valid");
  });
});

describe("buildSearchBody", () => {
  test("full text over title (boosted) and description, exact filters, price range, tiebreaker sort", () => {
    const body = buildSearchBody(parseSearchQuery({ q: "bakery", businessType: "Restaurant", minPrice: "1000", sort: "price_asc", limit: "10" }));
    expect(body.size).toBe(11);
    expect(body.query.bool.must).toEqual([{ multi_match: { query: "bakery", fields: ["title^2", "description"], type: "cross_fields", operator: "and" } }]);
    expect(body.query.bool.filter).toContainEqual({ term: { businessType: "Restaurant" } });
    expect(body.query.bool.filter).toContainEqual({ range: { "financials.askingPrice": { gte: 1000 } } });
    expect(body.sort).toEqual([{ "financials.askingPrice": { order: "asc", missing: "_last" } }, { serviceListingId: "asc" }]);
  });
});
