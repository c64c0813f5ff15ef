// Builds the only thing the index ever receives: public fields of a buyer-visible listing. Street address and
// postal code are dropped here unless SHOW_FULL_ADDRESS, the city unless SHOW_CITY_STATE or more; broker
// e-mail addresses are never part of the input. The listing's place (`geo`, for "within N miles") is resolved from
// that public part only (@pss/geo), so a distance filter can never find where a hidden address is.
import type { GeoPoint, PublicPlace } from "@pss/geo";
import {
  publicFinancials,
  publicLocation,
  type FullLocation,
  type ListingSearchDocument,
  type ListingStatus,
} from "@pss/contracts";

/** A listing at one version, from an event payload or from PostgreSQL. */
export interface ListingSource {
  id: number;
  version: number;
  status: ListingStatus;
  businessType: string;
  title: string | null;
  description: string | null;
  establishedAt: string | null;
  location: FullLocation;
  financials: Record<string, unknown> | null;
  /** Absent in events written before the indexer read it: no real-estate flag then. */
  property?: Record<string, unknown> | null;
  financing: Record<string, unknown> | null;
  updatedAt: string;
}

export interface ListingContext {
  brokerId: string;
  brokerName: string;
  listedAt: string;
  /** When the asking price last went down and stayed down; null: never (ISO 8601). */
  priceReducedAt: string | null;
}

/** Places a listing's public address (a gazetteer's locate). */
export type Locate = (place: PublicPlace) => GeoPoint | null;

export function toSearchDocument(
  source: ListingSource,
  context: ListingContext,
  optimizedDescription: string | null,
  locate: Locate,
): ListingSearchDocument {
  const location = publicLocation(source.location);
  const geo = locate(location);
  return {
    serviceListingId: source.id,
    title: source.title,
    description: optimizedDescription || null,
    businessType: source.businessType,
    status: source.status,
    underContract: source.status === "UNDER_CONTRACT",
    location,
    financials: publicFinancials(source.financials),
    financingAvailable: source.financing?.financingAvailable === true,
    sbaPrequalified: source.financing?.sbaPrequalified === true,
    realEstateIncluded: source.property?.propertyKind === "OWNED",
    ...(geo ? { geo: { lat: geo.lat, lon: geo.lon } } : {}),
    priceReducedAt: context.priceReducedAt,
    establishedAt: source.establishedAt,
    broker: { serviceBrokerId: context.brokerId, name: context.brokerName },
    listedAt: context.listedAt,
    updatedAt: source.updatedAt,
  };
}
