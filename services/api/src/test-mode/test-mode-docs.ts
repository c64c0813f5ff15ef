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

const TEST_ONLY_ANSWER = {
  status: "error",
  error:
    "This endpoint works in test mode only: call it with a test key (pss_test_...); live records are never touched by it",
};

/** Each route's examples (docs/openapi.ts, OperationExamples), by method and path. Both need a test key. */
export const TEST_MODE_EXAMPLES = {
  "POST /test/listings/:externalListingId/leads": {
    request: {
      summary: "A simulated buyer asks about test listing L-1042 (with a pss_test_ key)",
      params: { externalListingId: "L-1042" },
      body: { name: "Test Buyer", email: "buyer@example.com", message: "Is the lease transferable?" },
    },
    responses: {
      202: {
        summary: "Accepted: counted by the test key's lead counts, announced as lead.received",
        value: { status: "success", leadId: "01a2202e-9c35-7428-87a7-85d01737cd84" },
      },
      403: { summary: "A live key", value: TEST_ONLY_ANSWER },
    },
  },
  "DELETE /test-data": {
    request: { summary: "Delete every test record now (with a pss_test_ key)" },
    responses: {
      200: {
        summary: "What was deleted",
        value: { status: "success", deleted: { listings: 1, brokers: 1, leads: 1 } },
      },
      403: { summary: "A live key", value: TEST_ONLY_ANSWER },
    },
  },
} as const;
