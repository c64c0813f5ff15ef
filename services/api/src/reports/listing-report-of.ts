// A stored listing's processing report as partners read it: GET …/report (report-routes.ts) and the partner portal's
// listing page (through @pss/api/record-reads) build it here, so both always show the same steps and state.
import { listingReport, type ListingReport } from "@pss/contracts";
import type postgres from "postgres";
import type { StoredListing } from "../listings/listing-repository.ts";
import { storedListingQuality } from "../listings/listing-quality.ts";
import { reportTimes } from "./report-repository.ts";

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

export async function listingReportOf(
  sql: postgres.Sql,
  listing: StoredListing,
  links: { listingUrl: string; publicBaseUrl: string },
): Promise<ListingReport> {
  const times = await reportTimes(sql, listing.id);
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
    listingUrl: links.listingUrl,
    sitemapUrl: `${links.publicBaseUrl.replace(/\/+$/, "")}/sitemap.xml`,
  });
  return {
    externalListingId: listing.externalId,
    serviceListingId: listing.id,
    serviceListingUrl: links.listingUrl,
    version: listing.version,
    ...report,
    ...quality,
  };
}
