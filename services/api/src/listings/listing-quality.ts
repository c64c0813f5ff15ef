// Stored listings to the inputs of the quality rules (@pss/contracts quality-rules.ts). Pure: a caller that holds a
// stored listing (a PUT's read-back, a dry run's would-be record, a batch item, the processing report) gets the same
// warnings as the read-back shows. Brokers: brokers/broker-quality.ts.
import { listingQuality, type PhotoQualityInput, type Quality } from "@pss/contracts";
import type { ListingDocument } from "./listing-document.ts";
import type { StoredListing, StoredPhoto } from "./listing-repository.ts";

/** A listing's document with its photos' processing (matched by URL; an unseen URL is pending) and its broker's phone. */
export function listingDocumentQuality(
  document: ListingDocument,
  processed: readonly StoredPhoto[],
  brokerPhone: string | null | undefined,
): Quality {
  const byUrl = new Map(processed.map((p) => [p.url, p]));
  const photos: PhotoQualityInput[] = (document.photos ?? []).map(
    (p) => byUrl.get(p.url) ?? { url: p.url, state: "pending" },
  );
  return listingQuality({
    status: document.status,
    title: document.title,
    description: document.description,
    location: document.location,
    financials: document.financials,
    photos,
    brokerPhone,
  });
}

export function storedListingQuality(listing: StoredListing): Quality {
  return listingDocumentQuality(listing.document, listing.photos, listing.brokerPhone);
}
