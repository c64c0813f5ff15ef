// The OpenAPI prose of the listing routes (listing-routes.ts), kept out of the route definitions so
// those read as code. The document (GET /partner/v1/openapi.json) shows each text exactly as written here.

export const DRY_RUN_ABOUT =
  "With ?dryRun=true the body is checked exactly as a real PUT checks it (the same 400 and 404 answers) " +
  "and compared with the stored record; a valid body gets 200 with a DryRunResponse and nothing is " +
  "written or announced.";

/** Route descriptions, by method and path. */
export const LISTING_DOCS = {
  "PUT /listings/:externalListingId":
    `201 when the external ID is new, 200 otherwise. With an inline broker, the broker is created or ` +
    `updated in the same transaction. An identical repeat changes nothing. Rules beyond the schema (they ` +
    `span fields or depend on what is stored; 400 with details [{path, message}] naming each field that ` +
    `breaks one): on create, status, businessType, location (city, state, country, visibility) and ` +
    `brokerExternalId or broker are required; brokerExternalId and broker.externalBrokerId, if both are ` +
    `sent, must be equal; each photo URL may appear once (details name the repeat, e.g. photos[1].url). ` +
    `${DRY_RUN_ABOUT} A test key (pss_test_) writes test records: never shown to buyers, ` +
    `serviceListingUrl is a signed preview link. Every answer (dry runs too) carries warnings[] ({path, ` +
    `code, message}: what a buyer would miss; never blocking) and a qualityScore 0-100, computed from the ` +
    `record as it stands after the write (photos count once processed); the rubric is in ` +
    `docs/partner-api.md.`,
  "GET /listings/:externalListingId/history":
    "One entry per version a PUT wrote (identical repeats write none): when, the key ID and request ID, " +
    "each changed field path with its old and new value (texts over 500 characters cut, marked " +
    "truncated), and the status move. Entries are kept for the history retention (180 days by default). " +
    "Page with nextCursor.",
} as const;
