// The OpenAPI prose of the broker routes (broker-routes.ts), kept out of the route definitions so
// those read as code. The document (GET /partner/v1/openapi.json) shows each text exactly as written here.

/** Route descriptions, by method and path. */
export const BROKER_DOCS = {
  "PUT /brokers/:externalBrokerId":
    "201 when the external ID is new, 200 otherwise. An identical repeat changes nothing. Rules beyond " +
    "the types (400): each license gives a licenseNumber, a state or a country; each service area names a " +
    "city, a county or a state. With ?dryRun=true the body is checked exactly as a real PUT checks it " +
    "(the same 400 answers) and compared with the stored broker; a valid body gets 200 with a " +
    "DryRunResponse and nothing is written or announced. A test key (pss_test_) writes test records: " +
    "never shown to buyers, serviceProfileUrl is a signed preview link. Every answer (dry runs too) " +
    "carries warnings[] ({path, code, message}: what a buyer would miss; never blocking) and a " +
    "qualityScore 0-100 (rubric in docs/partner-api.md).",
  "GET /brokers/:externalBrokerId/history":
    "One entry per version a PUT wrote (a broker PUT, or a listing PUT carrying the broker inline; " +
    "identical repeats write none): when, the key ID and request ID, and each changed field path with its " +
    "old and new value (texts over 500 characters cut, marked truncated). Entries are kept for the " +
    "history retention (180 days by default). Page with nextCursor.",
} as const;
