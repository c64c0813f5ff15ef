// The OpenAPI prose of the lead routes (lead-routes.ts), kept out of the route definitions so
// those read as code. The document (GET /partner/v1/openapi.json) shows each text exactly as written here.

/** Route descriptions, by method and path. */
export const LEAD_DOCS = {
  "POST /v1/listings/:serviceListingId/leads":
    "202 once the lead is stored; it is then e-mailed to the broker and counted. Only for buyer-visible " +
    "listings (404 otherwise). Limited per client address and per listing (429 with Retry-After).",
} as const;
