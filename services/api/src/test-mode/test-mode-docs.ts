// The OpenAPI prose of the test-mode routes (test-mode-routes.ts), kept out of the route definitions so
// those read as code. The document (GET /partner/v1/openapi.json) shows each text exactly as written here.

/** Route descriptions, by method and path. */
export const TEST_MODE_DOCS = {
  "POST /test/listings/:externalListingId/leads":
    "202 once stored: the lead is announced (lead.submitted with mode test) and counted in the test key's " +
    "lead counts, never e-mailed. All fields are optional; submittedAt (not in the future) backdates it " +
    "to test lead-count date ranges. 409 while the listing's status is one buyers do not see. A live key " +
    "gets 403.",
  "DELETE /test-data":
    "Deletes the partner's test listings (with their photos, simulated leads and history) and test " +
    "brokers; live records are never touched. Test records are also deleted on their own once nobody " +
    "wrote them for TEST_DATA_RETENTION_DAYS (default 30). A live key gets 403.",
} as const;
