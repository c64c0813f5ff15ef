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

/** Each route's examples (docs/openapi.ts, OperationExamples), by method and path. */
export const REPORT_EXAMPLES = {
  "GET /listings/:externalListingId/report": {
    request: { summary: "Where is listing L-1042?", params: { externalListingId: "L-1042" } },
    responses: {
      200: {
        summary: "A moment after the PUT: stored, waiting for the index and its photo",
        value: {
          status: "success",
          report: {
            externalListingId: "L-1042",
            serviceListingId: 1042,
            serviceListingUrl: "https://market.example.com/listings/1042",
            version: 1,
            state: "PROCESSING",
            reasons: [
              { code: "AWAITING_INDEX", message: "Stored; waiting for the search index, after which buyers see it" },
              { code: "PHOTOS_PENDING", message: "1 photo still being downloaded and processed" },
            ],
            steps: [
              { step: "stored", outcome: "done", at: "2026-05-01T12:00:01.310Z", message: "Version 1 stored" },
              {
                step: "photo",
                path: "photos[0]",
                url: "https://img.acme-brokers.example/front.jpg",
                width: null,
                height: null,
                outcome: "pending",
                at: null,
                message: "Waiting to be downloaded and processed",
              },
              { step: "description.rewritten", outcome: "skipped", at: null, message: "No description to rewrite" },
              {
                step: "indexed",
                outcome: "pending",
                at: null,
                message: "Waiting for the search index to apply this version",
              },
              {
                step: "visible",
                outcome: "pending",
                at: null,
                message: "Buyers see it once it is indexed",
                url: "https://market.example.com/listings/1042",
              },
              {
                step: "sitemap",
                outcome: "done",
                at: "2026-05-01T12:00:01.310Z",
                message: "Listed in sitemap.xml",
                url: "https://market.example.com/sitemap.xml",
              },
            ],
            warnings: [
              {
                path: "description",
                code: "DESCRIPTION_MISSING",
                message:
                  "No description: buyers skip listings without one; describe the business, its history, staff and why it is for sale",
              },
              {
                path: "photos",
                code: "PHOTOS_TOO_FEW",
                message: "1 photo; listings with at least 5 get more inquiries",
              },
            ],
            qualityScore: 56,
          },
        },
      },
      404: { summary: "No listing of yours has this ID", value: { status: "error", error: "Listing not found" } },
    },
  },
} as const;
