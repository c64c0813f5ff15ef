// Builds the only thing the index ever receives: public fields of a buyer-visible listing. Street address and
// postal code are dropped here unless SHOW_FULL_ADDRESS, the city unless SHOW_CITY_STATE or more; broker
// e-mail addresses are never part of the input.
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
  financing: Record<string, unknown> | null;
  updatedAt: string;
}

export interface ListingContext {
  brokerId: string;
  brokerName: string;
  listedAt: string;
}

export function toSearchDocument(
  source: ListingSource,
  context: ListingContext,
  optimizedDescription: string | null,
): ListingSearchDocument {
  return {
    serviceListingId: source.id,
    title: source.title,
    description: optimizedDescription || null,
    businessType: source.businessType,
    status: source.status,
    underContract: source.status === "UNDER_CONTRACT",
    location: publicLocation(source.location),
    financials: publicFinancials(source.financials),
    financingAvailable: source.financing?.financingAvailable === true,
    establishedAt: source.establishedAt,
    broker: { serviceBrokerId: context.brokerId, name: context.brokerName },
    listedAt: context.listedAt,
    updatedAt: source.updatedAt,
  };
}
