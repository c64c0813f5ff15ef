// The OpenAPI prose and examples of GET /partner/v1/health (health-routes.ts), kept out of the route definition so
// it reads as code. The document (GET /partner/v1/openapi.json) shows each text exactly as written here.

/** Route descriptions, by method and path. */
export const HEALTH_DOCS = {
  "GET /health":
    "partnerId is the same for every key of the partner; mode says which records the key reads and writes (live or test); leadTracking whether it may read lead data. With lead tracking, organizations lists the partner's organizations and their offices (oldest first): the organizationId and officeId values the lead-count routes take.",
} as const;

/** Each route's examples (docs/openapi.ts, OperationExamples), by method and path. */
export const HEALTH_EXAMPLES = {
  "GET /health": {
    request: { summary: "Check the URL and the key" },
    responses: {
      200: {
        summary: "A live key with lead tracking (without it: leadTracking false, no organizations)",
        value: {
          status: "success",
          timestamp: "2026-05-01T12:00:00.000Z",
          partnerId: "6f1c2b9e-4d1a-4c8e-9a55-0d3b7e2f8a10",
          mode: "live",
          leadTracking: true,
          organizations: [
            {
              organizationId: 12,
              organizationName: "Acme Brokers",
              offices: [{ officeId: 31, officeName: "Acme Brokers main office", isDefault: true }],
            },
          ],
        },
      },
      401: { summary: "No key, or one that is not valid", value: { status: "error", error: "Unauthorized" } },
    },
  },
} as const;
