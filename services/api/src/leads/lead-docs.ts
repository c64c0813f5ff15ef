// The OpenAPI prose of the lead routes (lead-routes.ts), kept out of the route definitions so
// those read as code. The document (GET /partner/v1/openapi.json) shows each text exactly as written here.
import { ErrorMessages } from "@pss/contracts";

/** Route descriptions, by method and path. */
export const LEAD_DOCS = {
  "POST /v1/listings/:serviceListingId/leads":
    "202 once the lead is stored; it is then e-mailed to the broker and counted. Only for buyer-visible " +
    "listings (404 otherwise). Limited per client address and per listing (429 with Retry-After).",
} as const;

/** Each route's examples (docs/openapi.ts, OperationExamples), by method and path. */
export const LEAD_EXAMPLES = {
  "POST /v1/listings/:serviceListingId/leads": {
    request: {
      summary: "A buyer asks about listing 1042",
      params: { serviceListingId: 1042 },
      body: {
        name: "Alex Buyer",
        email: "alex@example.com",
        phone: "+1 512 555 0199",
        message: "I would like the financials for the last three years.",
      },
    },
    responses: {
      202: {
        summary: "Stored; on its way to the broker",
        value: { status: "success", leadId: "01a2202e-9cad-739f-9a43-e0a2e92fe33a" },
      },
      404: {
        summary: "No listing buyers see has this ID",
        value: { status: "error", error: ErrorMessages.listingNotFound },
      },
    },
  },
} as const;
