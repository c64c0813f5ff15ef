// What the buyers' JSON routes and pages share: search, the public view of a listing or a broker (or null),
// and what a page needs around them (search drop-downs, a listing that left the market, similar listings).
import type { Client } from "@opensearch-project/opensearch";
import type { PublicBroker, PublicListing, PublicListingSummary } from "@pss/contracts";
import type postgres from "postgres";
import { createGazetteer, type Gazetteer } from "@pss/geo";
import { createListingSearch, SearchUnavailableError, type ListingSearch } from "./listing-search.ts";
import type { FindPlace } from "./search-params.ts";
import {
  findGoneListing,
  findPublicBroker,
  findVisibleListing,
  isServiceId,
  similarVisibleListings,
  visibleListingsOfBroker,
  type GoneListing,
} from "./public-repository.ts";
import { summaryFromRow, toPublicBroker, toPublicListing } from "./public-views.ts";

export interface BuyerDeps {
  sql: postgres.Sql;
  /** null: search answers 503 (pages and the JSON views need only PostgreSQL). */
  opensearch: Client | null;
  searchAlias: string;
  publicBaseUrl: string;
  /** Places what a buyer types as "near" (main.ts's gazetteer); absent: one of this service's own. */
  gazetteer?: Gazetteer;
}

export interface BuyerService {
  search: ListingSearch;
  /** Where what a buyer typed as "near" is (the same datasets the indexer placed the listings with). */
  findPlace: FindPlace;
  listing(id: string): Promise<PublicListing | null>;
  broker(id: string): Promise<PublicBroker | null>;
  /** A public listing that left the market (SOLD, ARCHIVED): only its business type and state. */
  goneListing(id: string): Promise<GoneListing | null>;
  similarListings(like: GoneListing, limit: number): Promise<PublicListingSummary[]>;
}

/** A profile lists at most this many of the broker's listings, newest first. */
const PROFILE_LISTINGS = 100;

export function createBuyerService(deps: BuyerDeps): BuyerService {
  const gazetteer = deps.gazetteer ?? createGazetteer();
  const unavailable = async (): Promise<never> => {
    throw new SearchUnavailableError();
  };
  return {
    search: deps.opensearch
      ? createListingSearch({
          opensearch: deps.opensearch,
          alias: deps.searchAlias,
          sql: deps.sql,
          publicBaseUrl: deps.publicBaseUrl,
        })
      : unavailable,
    findPlace: (text) => gazetteer.find(text),
    async listing(id) {
      if (!isServiceId(id)) return null;
      const row = await findVisibleListing(deps.sql, id);
      return row ? toPublicListing(row, deps.publicBaseUrl) : null;
    },
    async broker(id) {
      if (!isServiceId(id)) return null;
      const row = await findPublicBroker(deps.sql, id);
      if (!row) return null;
      return toPublicBroker(row, await visibleListingsOfBroker(deps.sql, id, PROFILE_LISTINGS), deps.publicBaseUrl);
    },
    async goneListing(id) {
      return isServiceId(id) ? findGoneListing(deps.sql, id) : null;
    },
    async similarListings(like, limit) {
      return (await similarVisibleListings(deps.sql, like, limit)).map((row) =>
        summaryFromRow(row, deps.publicBaseUrl),
      );
    },
  };
}
