// The OpenAPI prose of the report routes (report-routes.ts), kept out of the route definitions so
// those read as code. The document (GET /partner/v1/openapi.json) shows each text exactly as written here.

/** Route descriptions, by method and path. */
export const REPORT_DOCS = {
  "GET /listings/:externalListingId/report":
    "Steps in order: stored; one per photo (downloaded and processed with its size, or the failure and " +
    "what to do); description.rewritten; indexed; visible (buyers see it at its URL); sitemap. Each has " +
    "an outcome (done, pending, failed, skipped) and the time it finished. state: LIVE, " +
    "LIVE_WITH_WARNINGS, PROCESSING, NOT_VISIBLE or FAILED, with reasons. A webhook " +
    "listing.report.changed announces each change of state. Read-only; a key reads only its own partner's " +
    "records of its mode.",
} as const;
