// Buyers' full-text search over the OpenSearch alias: relevance on title (boosted) and description, exact
// filters, price or recency sorts, and search_after paging with the listing ID as tiebreaker. The index lags
// PostgreSQL, so every hit is checked against PostgreSQL (one query per page) before it is returned: a listing
// no longer buyer-visible is dropped, and the address is shown as its current visibility allows.
import type { Client } from "@opensearch-project/opensearch";
import type { ListingSearchDocument, SearchResponse, UntypedJson } from "@pss/contracts";
import type postgres from "postgres";
import { openSearchBody } from "@pss/service-kit";
import { ApiError, BadRequestError } from "@pss/http-kit";
import { buyerSearchFilter } from "./buyer-visibility.ts";
import { currentHitStates, type CurrentHitState } from "./public-repository.ts";
import { summaryFromDocument } from "./public-views.ts";
import { encodeSearchCursor, type SearchRequest } from "./search-params.ts";

export class SearchUnavailableError extends ApiError {
  constructor() {
    super(503, "Search is temporarily unavailable; please try again shortly", undefined, { "Retry-After": "5" });
  }
}

export interface ListingSearchDeps {
  opensearch: Client;
  alias: string;
  sql: postgres.Sql;
  publicBaseUrl: string;
}

const SORTS: Record<SearchRequest["sort"], unknown[]> = {
  relevance: ["_score", { serviceListingId: "asc" }],
  newest: [{ listedAt: "desc" }, { serviceListingId: "desc" }],
  price_asc: [{ "financials.askingPrice": { order: "asc", missing: "_last" } }, { serviceListingId: "asc" }],
  price_desc: [{ "financials.askingPrice": { order: "desc", missing: "_last" } }, { serviceListingId: "asc" }],
};

/** An inclusive range on a money field; a listing without the figure never matches it. */
function range(field: string, min: number | null, max: number | null): unknown[] {
  if (min === null && max === null) return [];
  return [{ range: { [field]: { ...(min !== null ? { gte: min } : {}), ...(max !== null ? { lte: max } : {}) } } }];
}

export function buildSearchBody(r: SearchRequest) {
  const filter: unknown[] = [...buyerSearchFilter()];
  const mustNot: unknown[] = [];
  if (r.businessType) filter.push({ term: { businessType: r.businessType } });
  if (r.state) filter.push({ term: { "location.state": r.state } });
  if (r.city) filter.push({ term: { "location.city": r.city } });
  filter.push(
    ...range("financials.askingPrice", r.minPrice, r.maxPrice),
    ...range("financials.revenue", r.minRevenue, r.maxRevenue),
    ...range("financials.sde", r.minSde, r.maxSde),
  );
  // "Not offered" includes documents indexed before the field existed (they lack it).
  if (r.financingAvailable === true) filter.push({ term: { financingAvailable: true } });
  if (r.financingAvailable === false) mustNot.push({ term: { financingAvailable: true } });
  if (r.underContract !== null) filter.push({ term: { underContract: r.underContract } });
  // cross_fields: every word must appear, in the title or the description.
  const must = r.q
    ? [{ multi_match: { query: r.q, fields: ["title^2", "description"], type: "cross_fields", operator: "and" } }]
    : [];
  return {
    size: r.limit + 1,
    track_total_hits: true,
    query: { bool: { must, filter, ...(mustNot.length ? { must_not: mustNot } : {}) } },
    sort: SORTS[r.sort],
    ...(r.after ? { search_after: r.after } : {}),
    ...(r.from ? { from: r.from } : {}),
  };
}

export function createListingSearch(deps: ListingSearchDeps) {
  return async function search(request: SearchRequest): Promise<SearchResponse> {
    let hits: { _source: ListingSearchDocument; sort: unknown[] }[];
    let total: number;
    try {
      const res = await deps.opensearch.search({ index: deps.alias, body: openSearchBody(buildSearchBody(request)) });
      const body = res.body as unknown as { hits: { total: { value: number }; hits: typeof hits } };
      hits = body.hits.hits;
      total = body.hits.total.value;
    } catch (err) {
      // Before the indexer's first start there is no index: nothing is searchable yet.
      if (
        (err as { meta?: { body?: { error?: { type?: string } } } }).meta?.body?.error?.type ===
        "index_not_found_exception"
      )
        return { status: "success", total: 0, results: [], nextCursor: null };
      const status = (err as { meta?: { statusCode?: number } }).meta?.statusCode;
      // Sort values OpenSearch cannot use: only a hand-made cursor gets here (its fingerprint matched).
      if (status === 400 && request.after)
        throw new BadRequestError("cursor is not valid; pass nextCursor from the previous page unchanged");
      if (status !== undefined && status >= 400 && status < 500 && status !== 429) throw err;
      throw new SearchUnavailableError();
    }
    const page = hits.slice(0, request.limit);
    const current = await currentHitStates(
      deps.sql,
      page.map((h) => h._source.serviceListingId),
    );
    const last = page.at(-1);
    return {
      status: "success",
      total,
      results: page.flatMap((h) => {
        const now = current.get(h._source.serviceListingId);
        return now && mayShow(now, request) ? [summaryFromDocument(h._source, now, deps.publicBaseUrl)] : [];
      }),
      // From the last hit OpenSearch returned, shown or not: paging stays on the index's order.
      nextCursor: hits.length > request.limit && last ? encodeSearchCursor(request, last.sort) : null,
    };
  };
}

/**
 * A hit is shown only if PostgreSQL still has it buyer-visible (buyer-visibility.ts); a city filter never matches a
 * listing whose city is hidden now (the index may still hold the city from before the partner hid it).
 */
function mayShow(now: CurrentHitState, request: SearchRequest): boolean {
  if (!now.visible) return false;
  if (request.city !== null && now.location.visibility === "SHOW_STATE_ONLY") return false;
  // The badge comes from PostgreSQL: a hit whose status moved since indexing must not contradict the filter.
  if (request.underContract !== null && (now.status === "UNDER_CONTRACT") !== request.underContract) return false;
  return true;
}

export type ListingSearch = ReturnType<typeof createListingSearch>;

/** What the search form offers in its drop-downs: values buyer-visible listings have, as partners spell them. */
export interface SearchFacets {
  businessTypes: string[];
  states: string[];
}

const FACET_SIZE = 200;

/** Distinct values of a normalized (lower-cased) keyword, each with one listing's own spelling of it. */
const facet = (field: string) => ({
  terms: { field, size: FACET_SIZE, order: { _key: "asc" } },
  aggs: { spelling: { top_hits: { size: 1, _source: { includes: [field] } } } },
});

type FacetBuckets = { buckets: { key: string; spelling: { hits: { hits: { _source: UntypedJson }[] } } }[] };

export function createSearchFacets(deps: Pick<ListingSearchDeps, "opensearch" | "alias">) {
  return async function facets(): Promise<SearchFacets> {
    let aggs: { businessTypes: FacetBuckets; states: FacetBuckets };
    try {
      const res = await deps.opensearch.search({
        index: deps.alias,
        body: openSearchBody({
          size: 0,
          query: { bool: { filter: buyerSearchFilter() } },
          aggs: { businessTypes: facet("businessType"), states: facet("location.state") },
        }),
      });
      aggs = (res.body as unknown as { aggregations: typeof aggs }).aggregations;
    } catch (err) {
      if (
        (err as { meta?: { body?: { error?: { type?: string } } } }).meta?.body?.error?.type ===
        "index_not_found_exception"
      )
        return { businessTypes: [], states: [] };
      throw new SearchUnavailableError();
    }
    const spellings = (agg: FacetBuckets, read: (source: UntypedJson) => unknown) =>
      agg.buckets
        .map((b) => read(b.spelling.hits.hits[0]?._source ?? {}))
        .filter((v): v is string => typeof v === "string");
    return {
      businessTypes: spellings(aggs.businessTypes, (s) => s.businessType),
      states: spellings(aggs.states, (s) => s.location?.state),
    };
  };
}

export type SearchFacetsReader = ReturnType<typeof createSearchFacets>;
