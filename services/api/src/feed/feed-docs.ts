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

/** Each route's examples (docs/openapi.ts, OperationExamples), by method and path. */
export const FEED_EXAMPLES = {
  "GET /events": {
    request: { summary: "The first page: no after, so from the oldest event kept", query: { limit: "100" } },
    responses: {
      200: {
        summary: "A broker, then a listing, created (pass nextCursor as after= next time)",
        value: {
          status: "success",
          results: [
            {
              sequence: 1,
              type: "broker.created",
              occurredAt: "2026-05-01T12:00:00.120Z",
              recordType: "broker",
              version: 1,
              data: { externalBrokerId: "B-7", serviceBrokerId: "77", changedPaths: ["email", "name", "phone"] },
            },
            {
              sequence: 2,
              type: "listing.created",
              occurredAt: "2026-05-01T12:00:01.310Z",
              recordType: "listing",
              version: 1,
              data: {
                externalListingId: "L-1042",
                serviceListingId: 1042,
                serviceBrokerId: "77",
                status: "FOR_SALE",
                changedPaths: [
                  "brokerExternalId",
                  "businessType",
                  "financials",
                  "location",
                  "photos",
                  "status",
                  "title",
                ],
              },
            },
          ],
          nextCursor: "2",
        },
      },
      410: {
        summary: "after= older than what the feed keeps",
        value: {
          status: "error",
          error: `Events up to sequence 1200 are no longer kept (kept at least ${FEED_RETENTION_DAYS} days): read the records with GET /partner/v1/listings and /partner/v1/brokers, then follow the feed from after=1200`,
        },
      },
    },
  },
} as const;
