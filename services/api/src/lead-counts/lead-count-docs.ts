// The OpenAPI prose of the lead-count routes (lead-count-routes.ts), kept out of the route definitions so
// those read as code. The document (GET /partner/v1/openapi.json) shows each text exactly as written here.

export const LEAD_COUNTS_ABOUT =
  "Counts leads from startDate (inclusive; omitted = from the beginning) to endDate (exclusive; omitted " +
  "= now). Requires a key with lead-tracking permission (401 otherwise). A test key counts only the " +
  "simulated leads of test listings (POST /partner/v1/test/listings/{externalListingId}/leads); a live " +
  "key never counts them. Rule beyond the schema (it spans two parameters): when both are given, " +
  "startDate must not be after endDate (the same instant is an empty range, 0); otherwise 400 with " +
  'details [{path: "startDate", …}].';

/** Route descriptions, by method and path. */
export const LEAD_COUNT_DOCS = {
  "GET /offices/:officeId/leads/count": `${LEAD_COUNTS_ABOUT} 404 "Office not found" for an office that is not the partner's.`,
  "GET /organizations/:organizationId/leads/count": `${LEAD_COUNTS_ABOUT} 404 "Organization not found" for an organization that is not the partner's.`,
} as const;

/** Each route's examples (docs/openapi.ts, OperationExamples), by method and path. */
export const LEAD_COUNT_EXAMPLES = {
  "GET /offices/:officeId/leads/count": {
    request: {
      summary: "Office 31's leads in May 2026",
      params: { officeId: 31 },
      query: { startDate: "2026-05-01T00:00:00Z", endDate: "2026-06-01T00:00:00Z" },
    },
    responses: {
      200: {
        summary: "The count",
        value: { status: "success", officeId: 31, officeName: "Acme Brokers main office", totalLeads: 12 },
      },
      404: { summary: "Not an office of yours", value: { status: "error", error: "Office not found" } },
    },
  },
  "GET /organizations/:organizationId/leads/count": {
    request: { summary: "Every lead of organization 12", params: { organizationId: 12 } },
    responses: {
      200: {
        summary: "The count, with every office",
        value: {
          status: "success",
          organizationId: 12,
          organizationName: "Acme Brokers",
          totalLeads: 15,
          officeBreakdown: [
            { officeId: 31, officeName: "Acme Brokers main office", totalLeads: 12 },
            { officeId: 32, officeName: "Acme Brokers Round Rock", totalLeads: 3 },
          ],
        },
      },
      404: { summary: "Not an organization of yours", value: { status: "error", error: "Organization not found" } },
    },
  },
} as const;
