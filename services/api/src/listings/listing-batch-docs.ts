// The OpenAPI prose of the listing-batch routes (listing-batch-routes.ts), kept out of the route definitions so
// those read as code. The document (GET /partner/v1/openapi.json) shows each text exactly as written here.
import { BATCH_ABOUT } from "../batch/batch-docs.ts";

/** Route descriptions, by method and path. */
export const LISTING_BATCH_DOCS = {
  "POST /listings/batch":
    `${BATCH_ABOUT} Items with an inline broker write it as their PUT does; a listing that names a broker ` +
    `written inline by an earlier item of the batch finds it.`,
} as const;
