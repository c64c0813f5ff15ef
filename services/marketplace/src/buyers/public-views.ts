// Rows and index documents → the public JSON shapes. Everything buyers get passes through here, so the rules
// live in one place: address by visibility, ready images only, no e-mail or phone, contact details removed.
import {
  isBuyerVisible,
  PRICE_REDUCED_DAYS,
  publicFinancials,
  publicLocation,
  rewriteDescription,
  type ListingSearchDocument,
  type ListingStatus,
  type PublicBroker,
  type PublicListing,
  type PublicListingSummary,
  variantsWithUrls,
} from "@pss/contracts";
import type { CurrentHitState, PublicBrokerRow, PublicImageRow, PublicListingRow } from "./public-repository.ts";

export const listingUrl = (base: string, id: number | string) => `${base}/listings/${id}`;
export const brokerUrl = (base: string, id: string) => `${base}/brokers/${id}`;

/** The "price reduced" badge: the asking price went down within PRICE_REDUCED_DAYS and stayed down. */
export function isPriceReduced(priceReducedAt: Date | string | null | undefined, now = Date.now()): boolean {
  if (!priceReducedAt) return false;
  return now - new Date(priceReducedAt).getTime() <= PRICE_REDUCED_DAYS * 24 * 3600 * 1000;
}

/** What buyers read: the stored rewrite, or (until the indexer has made it) the same deterministic rewrite. */
export function buyerDescription(row: {
  description: string | null;
  descriptionOptimized: string | null;
}): string | null {
  if (row.description === null) return null;
  return (row.descriptionOptimized ?? rewriteDescription(row.description)) || null;
}

export function excerpt(text: string | null, max = 240): string | null {
  if (!text) return null;
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max);
  return `${cut.slice(0, cut.lastIndexOf(" ") > max / 2 ? cut.lastIndexOf(" ") : max).replace(/[\s,.;:!?-]+$/, "")}…`;
}

const image = (i: PublicImageRow, base: string) => ({
  width: i.width,
  height: i.height,
  variants: variantsWithUrls(i.variants, base),
});
const photo = (base: string) => (p: PublicImageRow & { sortKey: number }) => ({
  sortKey: p.sortKey,
  ...image(p, base),
});

/** Sub-objects as given, minus nothing: property and financing carry no contact or address data. */
const plain = (o: Record<string, unknown> | null) => (o && typeof o === "object" ? o : {});

export function toPublicListing(row: PublicListingRow, base: string): PublicListing {
  return {
    serviceListingId: row.id,
    serviceListingUrl: listingUrl(base, row.id),
    title: row.title,
    description: buyerDescription(row),
    businessType: row.businessType,
    status: row.status as ListingStatus,
    underContract: row.status === "UNDER_CONTRACT",
    location: publicLocation(row.location),
    establishedAt: row.establishedAt ? row.establishedAt.toISOString() : null,
    financials: publicFinancials(row.financials),
    property: plain(row.property),
    financing: plain(row.financing),
    photos: row.photos.map(photo(base)),
    broker: {
      serviceBrokerId: row.broker.id,
      name: row.broker.name,
      serviceProfileUrl: brokerUrl(base, row.broker.id),
      avatar: row.broker.avatar ? image(row.broker.avatar, base) : null,
    },
    listedAt: row.listedAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    priceReduced: isPriceReduced(row.priceReducedAt),
  };
}

export function summaryFromRow(row: PublicListingRow, base: string): PublicListingSummary {
  const full = toPublicListing(row, base);
  return {
    serviceListingId: full.serviceListingId,
    serviceListingUrl: full.serviceListingUrl,
    title: full.title,
    businessType: full.businessType,
    status: full.status,
    underContract: full.underContract,
    location: full.location,
    financials: full.financials,
    excerpt: excerpt(full.description),
    photo: full.photos[0] ?? null,
    broker: {
      serviceBrokerId: full.broker.serviceBrokerId,
      name: full.broker.name,
      serviceProfileUrl: full.broker.serviceProfileUrl,
    },
    listedAt: full.listedAt,
    priceReduced: full.priceReduced,
  };
}

/**
 * A search hit as buyers may see it now: status, address, broker and photo come from PostgreSQL (`current`),
 * because the index lags; title, excerpt and figures from the index document.
 */
export function summaryFromDocument(
  doc: ListingSearchDocument,
  current: CurrentHitState,
  base: string,
): PublicListingSummary {
  const status = current.status as ListingStatus;
  return {
    serviceListingId: doc.serviceListingId,
    serviceListingUrl: listingUrl(base, doc.serviceListingId),
    title: doc.title,
    businessType: doc.businessType,
    status,
    underContract: status === "UNDER_CONTRACT",
    location: publicLocation(current.location),
    financials: publicFinancials(doc.financials),
    excerpt: excerpt(doc.description),
    photo: current.photo ? photo(base)(current.photo) : null,
    broker: {
      serviceBrokerId: current.broker.id,
      name: current.broker.name,
      serviceProfileUrl: brokerUrl(base, current.broker.id),
    },
    listedAt: doc.listedAt,
    // From PostgreSQL, like the status: the badge never contradicts the listing's page.
    priceReduced: isPriceReduced(current.priceReducedAt),
  };
}

export function toPublicBroker(row: PublicBrokerRow, listings: PublicListingRow[], base: string): PublicBroker {
  const bio = row.profile.bio ? rewriteDescription(row.profile.bio) || null : null;
  return {
    serviceBrokerId: row.id,
    serviceProfileUrl: brokerUrl(base, row.id),
    name: row.name,
    avatar: row.avatar ? image(row.avatar, base) : null,
    bio,
    website: row.profile.website ?? null,
    linkedInUrl: row.profile.linkedInUrl ?? null,
    licenses: row.licenses,
    serviceAreas: row.serviceAreas,
    listings: listings.filter((l) => isBuyerVisible(l.status)).map((l) => summaryFromRow(l, base)),
  };
}
