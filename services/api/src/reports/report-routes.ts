// GET /partner/v1/listings/{externalListingId}/report: the processing report (issue 24). Read-only, scoped to the
// key's partner and mode like every record; the rules are listingReport in @pss/contracts.
import { Elysia } from "elysia";
import { ErrorMessages, listingReport, ListingReportResponse, type ListingReport } from "@pss/contracts";
import { documented, withExamples } from "../docs/openapi.ts";
import { NotFoundError } from "../http/errors.ts";
import type { PartnerContext } from "../partner/partner-context.ts";
import { findListing } from "../listings/listing-repository.ts";
import { storedListingQuality } from "../quality/record-quality.ts";
import { reportTimes } from "./report-repository.ts";
import { REPORT_DOCS, REPORT_EXAMPLES } from "./report-docs.ts";

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

export function createReportRoutes(ctx: PartnerContext) {
  const { sql } = ctx.deps;
  return new Elysia({ name: "report-routes" }).use(ctx.auth).get(
    "/listings/:externalListingId/report",
    async ({ params, partner }) => {
      const listing = await findListing(sql, partner, ctx.externalId(params.externalListingId, "externalListingId"));
      if (!listing) throw new NotFoundError(ErrorMessages.listingNotFound);
      const [times, listingUrl] = await Promise.all([
        reportTimes(sql, listing.id),
        ctx.listingUrl(partner, listing.id),
      ]);
      const quality = storedListingQuality(listing);
      const d = listing.document;
      const report = listingReport({
        mode: listing.mode,
        status: d.status,
        version: listing.version,
        storedAt: listing.updatedAt.toISOString(),
        description: d.description ?? null,
        descriptionOptimized: listing.descriptionOptimized,
        descriptionOptimizedAt: iso(times.descriptionOptimizedAt),
        indexState: listing.indexState,
        indexStateAt: iso(times.indexStateAt),
        publishedAt: iso(times.publishedAt),
        visibleSince: iso(times.statusSince ?? listing.createdAt),
        photos: listing.photos.map((p) => ({
          url: p.url,
          state: p.state,
          width: p.width,
          height: p.height,
          failureReason: p.failureReason,
          updatedAt: iso(times.photoTimes.get(p.url)),
        })),
        quality,
        listingUrl,
        sitemapUrl: `${ctx.deps.publicBaseUrl.replace(/\/+$/, "")}/sitemap.xml`,
      });
      const body: ListingReport = {
        externalListingId: listing.externalId,
        serviceListingId: listing.id,
        serviceListingUrl: listingUrl,
        version: listing.version,
        ...report,
        ...quality,
      };
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
