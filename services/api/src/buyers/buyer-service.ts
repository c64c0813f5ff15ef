// What the buyers' JSON routes and pages share: read the public view of a listing or a broker (or null).
import type { Client } from "@opensearch-project/opensearch";
import type { PublicBroker, PublicListing } from "@pss/contracts";
import type postgres from "postgres";
import { createListingSearch, SearchUnavailableError, type ListingSearch } from "./listing-search.ts";
import { findPublicBroker, findVisibleListing, isServiceId, visibleListingsOfBroker } from "./public-repository.ts";
import { toPublicBroker, toPublicListing } from "./public-views.ts";

export interface BuyerDeps {
  sql: postgres.Sql;
  /** null: search answers 503 (pages and the JSON views need only PostgreSQL). */
  opensearch: Client | null;
  searchAlias: string;
  publicBaseUrl: string;
}

export interface BuyerService {
  search: ListingSearch;
  listing(id: string): Promise<PublicListing | null>;
  broker(id: string): Promise<PublicBroker | null>;
}

/** A profile lists at most this many of the broker's listings, newest first. */
const PROFILE_LISTINGS = 100;

export function createBuyerService(deps: BuyerDeps): BuyerService {
  return {
    search: deps.opensearch
      ? createListingSearch({ opensearch: deps.opensearch, alias: deps.searchAlias, sql: deps.sql, publicBaseUrl: deps.publicBaseUrl })
      : async () => {
          throw new SearchUnavailableError();
        },
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
  };
}
