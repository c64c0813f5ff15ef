// The OpenAPI prose of the feed routes (feed-routes.ts), kept out of the route definitions so
// those read as code. The document (GET /partner/v1/openapi.json) shows each text exactly as written here.
import { FEED_RETENTION_DAYS } from "@pss/contracts";

/** Route descriptions, by method and path. */
export const FEED_DOCS = {
  "GET /events":
    `Events of the key's partner and mode (a test key reads its test records' events), oldest first, ` +
    `after the sequence number given (after=, the nextCursor of the previous page). Numbers are per ` +
    `partner and mode, consecutive, given after the change committed: a reader that follows nextCursor ` +
    `never passes over a committed change, also one whose transaction committed late. lead.received only ` +
    `for keys with lead tracking; a key without it reads its own numbering of the other events (consecutive, ` +
    `no hole where a lead was), and its cursors and 410 are in that numbering. Kept at least ` +
    `${FEED_RETENTION_DAYS} days; a cursor older than that gets 410: reconcile with the list endpoints, ` +
    `then follow from the sequence the answer names. Events appear within about a second of the commit.`,
} as const;
