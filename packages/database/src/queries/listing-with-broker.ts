// The listing-with-broker read that the buyers' pages (API) and the search documents (indexer) share: a listing
// `l` joined with its broker `b`, and the columns both take from that join. Each caller adds its own columns and
// WHERE clause; what a listing's broker and "went live" are is decided here only.
import type postgres from "postgres";
import { listedAt } from "./listed-at.ts";

/** `listings l JOIN brokers b`: every listing has exactly one broker (brokers.id, NOT NULL foreign key). */
export function listingWithBroker(sql: postgres.Sql) {
  return sql`listings l JOIN brokers b ON b.id = l.broker_id`;
}

/** broker_id (text), broker_name and listed_at (timestamptz), selected from listingWithBroker. */
export function listingBrokerColumns(sql: postgres.Sql) {
  return sql`b.id::text AS broker_id, b.name AS broker_name, ${listedAt(sql, "l")} AS listed_at`;
}

export interface ListingBroker {
  brokerId: string;
  brokerName: string;
  listedAt: Date;
}

/** The columns of listingBrokerColumns as values, from a row selected with them (postgres.js rows are not typed). */
export function toListingBroker(row: postgres.Row): ListingBroker {
  return { brokerId: String(row.broker_id), brokerName: String(row.broker_name), listedAt: new Date(row.listed_at) };
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
