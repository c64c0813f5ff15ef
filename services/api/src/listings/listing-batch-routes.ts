// POST /partner/v1/listings/batch: many listing PUTs in one request (batch/batch-route.ts).
import { ListingBatchBody, ListingBatchResponse, ListingBody } from "@pss/contracts";
import { createBatchRoute } from "../batch/batch-route.ts";
import type { PartnerContext } from "../partner/partner-context.ts";
import { listingPutAnswer } from "./listing-answers.ts";
import { upsertListingBatch } from "./listing-batch.ts";
import { LISTING_BATCH_DOCS } from "./listing-batch-docs.ts";
import { LISTING_EXAMPLES } from "./listing-docs.ts";
import { dryRunListing } from "./listing-service.ts";

export function createListingBatchRoutes(ctx: PartnerContext) {
  return createBatchRoute(ctx, {
    record: "listing",
    itemBody: ListingBody,
    batchBody: ListingBatchBody,
    response: ListingBatchResponse,
    description: LISTING_BATCH_DOCS["POST /listings/batch"],
    examples: LISTING_EXAMPLES["POST /listings/batch"],
    dryRun: dryRunListing,
    upsert: upsertListingBatch,
    answer: listingPutAnswer,
  });
}
