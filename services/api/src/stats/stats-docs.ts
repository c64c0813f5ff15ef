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
