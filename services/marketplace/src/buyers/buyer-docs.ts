// The OpenAPI prose of the buyer routes (buyer-routes.ts), kept out of the route definitions so
// those read as code. The document (GET /partner/v1/openapi.json) shows each text exactly as written here.

/** Route descriptions, by method and path. */
export const BUYER_DOCS = {
  "GET /v1/listings":
    "Full text over title and description, exact filters, sorts by relevance, newest or price; page with " +
    "nextCursor. Every answer counts the matching listings per business type, state and asking-price band " +
    "(facets; each facet counts with every filter but its own). near with radius and radiusUnit finds listings " +
    "within that distance of a US ZIP code or a city (coordinates from GeoNames, CC BY 4.0, and the U.S. Census " +
    "Bureau's ZIP code gazetteer); listings that show only their state are never near anywhere. priceReduced: " +
    "the asking price went down in the last 30 days. Addresses are shown as each listing's visibility allows. " +
    "503 while search is " +
    "unavailable. Rules beyond the schema (they span two parameters; 400 with details [{path, message}] " +
    "naming the lower bound): minPrice must not be above maxPrice, minRevenue not above maxRevenue, " +
    "minSde not above maxSde, radius and radiusUnit only with near. A cursor is valid only as the nextCursor of " +
    "the same search (same q, filters and sort).",
} as const;
