// Buyers' full-text search over the OpenSearch alias: relevance on title (boosted) and description, exact
// filters (figures, flags, "listed in the last N days", "price reduced", "within N miles of"), counts per business
// type, state and price band (facets), price or recency sorts, and search_after paging with the listing ID as
// tiebreaker. The index lags
// PostgreSQL, so every hit is checked against PostgreSQL (one query per page) before it is returned: a listing
// no longer buyer-visible is dropped, and the address is shown as its current visibility allows.
import type { Client } from "@opensearch-project/opensearch";
import {
  PRICE_BANDS,
  PRICE_REDUCED_DAYS,
  type ListingSearchDocument,
  type SearchFacets,
  type SearchResponse,
  type UntypedJson,
} from "@pss/contracts";
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

/** A true/false filter on a flag that documents indexed before it existed lack ("not" includes them). */
function flag(field: string, value: boolean | null, filter: unknown[], mustNot: unknown[]): void {
  if (value === true) filter.push({ term: { [field]: true } });
  if (value === false) mustNot.push({ term: { [field]: true } });
}

const PRICE_REDUCED = { range: { priceReducedAt: { gte: `now-${PRICE_REDUCED_DAYS}d` } } };

/** The filters a facet counts without: each facet's own (business type, state, asking price). */
interface FacetFilters {
  businessType: unknown[];
  state: unknown[];
  price: unknown[];
}

const FACET_SIZE = 200;

/** Counts per normalized (lower-cased) keyword, each with one listing's own spelling of it. */
const termsFacet = (field: string) => ({
  terms: { field, size: FACET_SIZE },
  aggs: { spelling: { top_hits: { size: 1, _source: { includes: [field] } } } },
});

const bool = (filter: unknown[]) => ({ bool: { filter } });

export function buildSearchBody(r: SearchRequest) {
  // Every filter but the facets' own: the hits and every facet count with these.
  const filter: unknown[] = [...buyerSearchFilter()];
  const mustNot: unknown[] = [];
  if (r.city) filter.push({ term: { "location.city": r.city } });
  filter.push(
    ...range("financials.revenue", r.minRevenue, r.maxRevenue),
    ...range("financials.sde", r.minSde, r.maxSde),
  );
  // "Not offered" includes documents indexed before the field existed (they lack it).
  flag("financingAvailable", r.financingAvailable, filter, mustNot);
  flag("sbaPrequalified", r.sbaPrequalified, filter, mustNot);
  flag("realEstateIncluded", r.realEstateIncluded, filter, mustNot);
  if (r.underContract !== null) filter.push({ term: { underContract: r.underContract } });
  if (r.priceReduced === true) filter.push(PRICE_REDUCED);
  if (r.priceReduced === false) mustNot.push(PRICE_REDUCED);
  if (r.listedWithinDays !== null) filter.push({ range: { listedAt: { gte: `now-${r.listedWithinDays}d` } } });
  if (r.changedAfter) {
    const window = { gt: r.changedAfter, ...(r.changedThrough ? { lte: r.changedThrough } : {}) };
    filter.push({
      bool: {
        should: [{ range: { listedAt: window } }, { range: { priceReducedAt: window } }],
        minimum_should_match: 1,
      },
    });
  }
  if (r.near)
    filter.push({
      geo_distance: {
        distance: `${Math.round(r.near.radiusKm * 1000)}m`,
        geo: { lat: r.near.place.point.lat, lon: r.near.place.point.lon },
      },
    });
  // The facets' own filters: applied to the hits after the counts (post_filter), and to the other facets' counts.
  const own: FacetFilters = {
    businessType: r.businessType ? [{ term: { businessType: r.businessType } }] : [],
    state: r.state ? [{ term: { "location.state": r.state } }] : [],
    price: range("financials.askingPrice", r.minPrice, r.maxPrice),
  };
  const postFilter = [...own.businessType, ...own.state, ...own.price];
  // cross_fields: every word must appear, in the title or the description.
  const must = r.q
    ? [{ multi_match: { query: r.q, fields: ["title^2", "description"], type: "cross_fields", operator: "and" } }]
    : [];
  return {
    size: r.limit + 1,
    track_total_hits: true,
    query: { bool: { must, filter, ...(mustNot.length ? { must_not: mustNot } : {}) } },
    ...(postFilter.length ? { post_filter: bool(postFilter) } : {}),
    aggs: {
      businessType: { filter: bool([...own.state, ...own.price]), aggs: { values: termsFacet("businessType") } },
      state: { filter: bool([...own.businessType, ...own.price]), aggs: { values: termsFacet("location.state") } },
      priceBand: {
        filter: bool([...own.businessType, ...own.state]),
        aggs: {
          bands: {
            range: {
              field: "financials.askingPrice",
              ranges: PRICE_BANDS.map((b) => ({ from: b.from, ...(b.below !== null ? { to: b.below } : {}) })),
            },
          },
        },
      },
    },
    sort: SORTS[r.sort],
    ...(r.after ? { search_after: r.after } : {}),
    ...(r.from ? { from: r.from } : {}),
  };
}

type TermsAgg = {
  values: { buckets: { key: string; doc_count: number; spelling: { hits: { hits: { _source: UntypedJson }[] } } }[] };
};
type SearchAggs = {
  businessType: TermsAgg;
  state: TermsAgg;
  priceBand: { bands: { buckets: { from?: number; to?: number; doc_count: number }[] } };
};

function facetsOf(aggs: SearchAggs): SearchFacets {
  const values = (agg: TermsAgg, read: (source: UntypedJson) => unknown) =>
    agg.values.buckets.flatMap((b) => {
      const spelled = read(b.spelling.hits.hits[0]?._source ?? {});
      return typeof spelled === "string" ? [{ value: spelled, count: b.doc_count }] : [];
    });
  return {
    businessType: values(aggs.businessType, (s) => s.businessType),
    state: values(aggs.state, (s) => s.location?.state),
    priceBand: PRICE_BANDS.map((band, i) => ({ ...band, count: aggs.priceBand.bands.buckets[i]?.doc_count ?? 0 })),
  };
}

/** No index yet (before the indexer's first start): nothing to count. */
export const NO_FACETS: SearchFacets = {
  businessType: [],
  state: [],
  priceBand: PRICE_BANDS.map((band) => ({ ...band, count: 0 })),
};

export function createListingSearch(deps: ListingSearchDeps) {
  return async function search(request: SearchRequest): Promise<SearchResponse> {
    let hits: { _source: ListingSearchDocument; sort: unknown[] }[];
    let total: number;
    let facets: SearchFacets;
    try {
      const res = await deps.opensearch.search({ index: deps.alias, body: openSearchBody(buildSearchBody(request)) });
      const body = res.body as unknown as {
        hits: { total: { value: number }; hits: typeof hits };
        aggregations: SearchAggs;
      };
      hits = body.hits.hits;
      total = body.hits.total.value;
      facets = facetsOf(body.aggregations);
    } catch (err) {
      // Before the indexer's first start there is no index: nothing is searchable yet.
      if (
        (err as { meta?: { body?: { error?: { type?: string } } } }).meta?.body?.error?.type ===
        "index_not_found_exception"
      )
        return { status: "success", total: 0, results: [], nextCursor: null, facets: NO_FACETS };
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
      facets,
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
