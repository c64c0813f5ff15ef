// The OpenAPI prose of the buyer routes (buyer-routes.ts), kept out of the route definitions so
// those read as code. The document (GET /partner/v1/openapi.json) shows each text exactly as written here.

/** Route descriptions, by method and path. */
export const BUYER_DOCS = {
  "GET /v1/listings":
    "Full text over title and description, exact filters, sorts by relevance, newest or price; page with " +
    "nextCursor. Addresses are shown as each listing's visibility allows. 503 while search is " +
    "unavailable. Rules beyond the schema (they span two parameters; 400 with details [{path, message}] " +
    "naming the lower bound): minPrice must not be above maxPrice, minRevenue not above maxRevenue, " +
    "minSde not above maxSde. A cursor is valid only as the nextCursor of the same search (same q, " +
    "filters and sort).",
} as const;
