// GET /partner/v1/listings/{externalListingId}/report: the processing report (issue 24). Read-only, scoped to the
// key's partner and mode like every record; the rules are listingReport in @pss/contracts.
import { Elysia } from "elysia";
import { ErrorMessages, ListingReportResponse } from "@pss/contracts";
import { documented, withExamples } from "../docs/openapi.ts";
import { NotFoundError } from "@pss/http-kit";
import type { PartnerContext } from "../partner/partner-context.ts";
import { findListing } from "../listings/listing-repository.ts";
import { listingReportOf } from "./listing-report-of.ts";
import { REPORT_DOCS, REPORT_EXAMPLES } from "./report-docs.ts";

export function createReportRoutes(ctx: PartnerContext) {
  const { sql } = ctx.deps;
  return new Elysia({ name: "report-routes" }).use(ctx.auth).get(
    "/listings/:externalListingId/report",
    async ({ params, partner }) => {
      const listing = await findListing(sql, partner, ctx.externalId(params.externalListingId, "externalListingId"));
      if (!listing) throw new NotFoundError(ErrorMessages.listingNotFound);
      const listingUrl = await ctx.listingUrl(partner, listing.id);
      const body = await listingReportOf(sql, listing, { listingUrl, publicBaseUrl: ctx.deps.publicBaseUrl });
      return { status: "success" as const, report: body };
    },
    {
      detail: {
        summary:
          "The listing's processing report: every step from the write to the buyer's page, and one overall state",
        description: REPORT_DOCS["GET /listings/:externalListingId/report"],
        ...withExamples(REPORT_EXAMPLES["GET /listings/:externalListingId/report"]),
        responses: documented({
          200: { description: "The report", schema: ListingReportResponse },
          404: ErrorMessages.listingNotFound,
        }),
      },
    },
  );
}
