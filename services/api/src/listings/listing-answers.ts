// The answer of a stored listing PUT, built in one place: the single PUT and every item of a batch answer with it
// (with the warnings and quality score of the listing as written).
import type { ListingPutResponse } from "@pss/contracts";
import type { ItemAnswer } from "../batch/batch-items.ts";
import type { PartnerContext } from "../partner/partner-context.ts";
import type { RecordScope } from "../records/record-scope.ts";
import type { ListingUpsertResult } from "./listing-service.ts";

export async function listingPutAnswer(
  ctx: PartnerContext,
  scope: RecordScope,
  result: ListingUpsertResult,
): Promise<ItemAnswer<ListingPutResponse>> {
  return {
    httpStatus: result.created ? 201 : 200,
    changed: result.changed,
    body: {
      status: "success",
      message: result.created ? "Listing created" : "Listing updated",
      serviceListingId: result.listingId,
      serviceListingUrl: await ctx.listingUrl(scope, result.listingId),
      ...result.quality,
    },
  };
}
