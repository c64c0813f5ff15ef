// The listing-with-broker read that the buyers' pages (marketplace) and the search documents (indexer) share: a
// listing `l` joined with its broker `b`, and the columns both take from that join. Each caller adds its own columns
// and WHERE clause; what a listing's broker, "went live" and "price reduced" are is decided here only.
import type postgres from "postgres";
import { listedAt } from "./listed-at.ts";
import { priceReducedAt } from "./price-reduced.ts";

/** `listings l JOIN brokers b`: every listing has exactly one broker (brokers.id, NOT NULL foreign key). */
export function listingWithBroker(sql: postgres.Sql) {
  return sql`listings l JOIN brokers b ON b.id = l.broker_id`;
}

/**
 * broker_id (text), broker_name, listed_at and price_reduced_at (timestamptz, or NULL), selected from
 * listingWithBroker.
 */
export function listingBrokerColumns(sql: postgres.Sql) {
  return sql`b.id::text AS broker_id, b.name AS broker_name, ${listedAt(sql, "l")} AS listed_at,
    ${priceReducedAt(sql, "l")} AS price_reduced_at`;
}

export interface ListingBroker {
  brokerId: string;
  brokerName: string;
  listedAt: Date;
  /** When the asking price last went down and stayed down (price-reduced.ts); null: never. */
  priceReducedAt: Date | null;
}

/** The columns of listingBrokerColumns as values, from a row selected with them (postgres.js rows are not typed). */
export function toListingBroker(row: postgres.Row): ListingBroker {
  return {
    brokerId: String(row.broker_id),
    brokerName: String(row.broker_name),
    listedAt: new Date(row.listed_at),
    priceReducedAt: row.price_reduced_at ? new Date(row.price_reduced_at) : null,
  };
}

/** A listing's location as every read model shows it (buyers' pages, search documents), from its listings columns. */
export function toListingLocation(row: postgres.Row) {
  return {
    streetAddress1: row.street_address1,
    city: row.city,
    state: row.state,
    postalCode: row.postal_code,
    country: row.country,
    visibility: row.visibility,
  };
}
