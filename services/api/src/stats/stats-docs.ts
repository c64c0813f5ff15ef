// The OpenAPI prose of the stats routes (stats-routes.ts), kept out of the route definitions so
// those read as code. The document (GET /partner/v1/openapi.json) shows each text exactly as written here.

/** Route descriptions, by method and path. */
export const STATS_DOCS = {
  "GET /listings/:externalListingId/stats":
    "startDate (inclusive) and endDate (exclusive) as on the lead-count routes (ISO 8601 date-times with " +
    "a time zone; the same 400 answers); omitted, from the listing's creation to now. One bucket per UTC " +
    "day the range touches, zeros included, each with the whole day's counts. views: one per visitor (an " +
    "address and a User-Agent) per listing per day, and at most a few visitors (3 by default) per address " +
    "(IPv6: per /64) per listing per day, known bots excluded; impressions: appearances in buyers' search " +
    "results, counted the same way. Counts are written asynchronously and may lag the pages by a few " +
    "seconds. inquiries (counts only) appear only " +
    "for keys with lead tracking. Read-only; a key reads only its own partner's listings of its mode. " +
    "Rule beyond the schema (it spans two parameters): when both are given, startDate must not be after " +
    'endDate; otherwise 400 with details [{path: "startDate", …}].',
} as const;

/** Each route's examples (docs/openapi.ts, OperationExamples), by method and path. */
export const STATS_EXAMPLES = {
  "GET /listings/:externalListingId/stats": {
    request: {
      summary: "Three days of listing L-1042",
      params: { externalListingId: "L-1042" },
      query: { startDate: "2026-05-01T00:00:00Z", endDate: "2026-05-04T00:00:00Z" },
    },
    responses: {
      200: {
        summary: "A key with lead tracking (without it, no inquiries)",
        value: {
          status: "success",
          externalListingId: "L-1042",
          serviceListingId: 1042,
          startDate: "2026-05-01",
          endDate: "2026-05-03",
          days: [
            { date: "2026-05-01", views: 41, impressions: 530, inquiries: 2 },
            { date: "2026-05-02", views: 37, impressions: 498, inquiries: 0 },
            { date: "2026-05-03", views: 12, impressions: 160, inquiries: 1 },
          ],
          totals: { views: 90, impressions: 1188, inquiries: 3 },
        },
      },
      404: { summary: "No listing of yours has this ID", value: { status: "error", error: "Listing not found" } },
    },
  },
} as const;
