// The buyers' side: what the public search and pages may show, and nothing more. The indexer and the API
// both build their public views through publicLocation(), so hidden address parts never leave PostgreSQL.
import { Type, type Static } from "@sinclair/typebox";
import { MediaVariant } from "./broker.ts";
import { License, ServiceArea } from "./broker.ts";
import { DOCUMENTED_ONLY, Nullable, OpenRecord, PageCursor } from "./common.ts";
import { TRIMMED } from "./patterns.ts";
import {
  BUYER_VISIBLE_STATUSES,
  ListingStatusSchema,
  VisibilitySchema,
  type ListingStatus,
  type Visibility,
} from "./listing.ts";

/** OpenSearch alias buyers' search reads and the indexer writes (OPENSEARCH_INDEX_ALIAS). */
export const DEFAULT_SEARCH_ALIAS = "listings";

/**
 * A status buyers may see: the status half of the visibility rule only. Whether buyers may see a listing record
 * is isVisibleToBuyers (mode.ts): a test record in a visible status is still never public.
 */
export function isBuyerVisible(status: string): status is ListingStatus {
  return (BUYER_VISIBLE_STATUSES as readonly string[]).includes(status);
}

export interface FullLocation {
  streetAddress1?: string | null;
  city: string;
  state: string;
  postalCode?: string | null;
  country: string;
  visibility: Visibility;
}

export const PublicLocation = Type.Object(
  {
    streetAddress1: Type.Optional(Type.String()),
    postalCode: Type.Optional(Type.String()),
    city: Type.Optional(Type.String()),
    state: Type.String(),
    country: Type.String(),
    visibility: VisibilitySchema,
  },
  { additionalProperties: true },
);
export type PublicLocation = Static<typeof PublicLocation>;

/**
 * Spec section 2: SHOW_FULL_ADDRESS shows everything, SHOW_CITY_STATE only city and state, SHOW_STATE_ONLY only
 * the state. The country is not part of the street address and always stays (a state code alone is ambiguous).
 * Hidden parts are left out entirely, never sent as null.
 */
export function publicLocation(l: FullLocation): PublicLocation {
  const out: PublicLocation = { state: l.state, country: l.country, visibility: l.visibility };
  if (l.visibility === "SHOW_FULL_ADDRESS") {
    if (l.streetAddress1) out.streetAddress1 = l.streetAddress1;
    if (l.postalCode) out.postalCode = l.postalCode;
  }
  if (l.visibility !== "SHOW_STATE_ONLY") out.city = l.city;
  return out;
}

export const PublicImage = Type.Object(
  { width: Nullable(Type.Integer()), height: Nullable(Type.Integer()), variants: Type.Array(MediaVariant) },
  { additionalProperties: true },
);
export const PublicPhoto = Type.Composite([Type.Object({ sortKey: Type.Integer() }), PublicImage], {
  additionalProperties: true,
});

export const PublicFinancials = Type.Object(
  {
    askingPrice: Type.Optional(Type.Number()),
    revenue: Type.Optional(Type.Number()),
    sde: Type.Optional(Type.Number()),
    inventory: Type.Optional(Type.Number()),
    ffande: Type.Optional(Type.Number()),
  },
  { additionalProperties: true },
);

export const BrokerSummary = Type.Object(
  { serviceBrokerId: Type.String(), name: Type.String(), serviceProfileUrl: Type.String() },
  { additionalProperties: true },
);

/** "Price reduced": the asking price went down within this many days and stayed down (docs/buyers-and-search.md). */
export const PRICE_REDUCED_DAYS = 30;

const priceReduced = Type.Boolean({
  description: `The asking price went down in the last ${PRICE_REDUCED_DAYS} days (and was not raised back since)`,
});

/** One search hit, or one entry of a broker's listings. */
export const PublicListingSummary = Type.Object(
  {
    serviceListingId: Type.Integer(),
    serviceListingUrl: Type.String(),
    title: Nullable(Type.String()),
    businessType: Type.String(),
    status: ListingStatusSchema,
    underContract: Type.Boolean(),
    location: PublicLocation,
    financials: PublicFinancials,
    excerpt: Nullable(Type.String()),
    photo: Nullable(PublicPhoto),
    broker: BrokerSummary,
    listedAt: Type.String(),
    priceReduced,
  },
  { additionalProperties: true },
);
export type PublicListingSummary = Static<typeof PublicListingSummary>;

export const PublicListing = Type.Object(
  {
    serviceListingId: Type.Integer(),
    serviceListingUrl: Type.String(),
    title: Nullable(Type.String()),
    description: Nullable(Type.String()),
    businessType: Type.String(),
    status: ListingStatusSchema,
    underContract: Type.Boolean(),
    location: PublicLocation,
    establishedAt: Nullable(Type.String()),
    financials: PublicFinancials,
    property: OpenRecord(),
    financing: OpenRecord(),
    photos: Type.Array(PublicPhoto),
    broker: Type.Composite([BrokerSummary, Type.Object({ avatar: Nullable(PublicImage) })], {
      additionalProperties: true,
    }),
    listedAt: Type.String(),
    updatedAt: Type.String(),
    priceReduced,
  },
  { additionalProperties: true },
);
export type PublicListing = Static<typeof PublicListing>;

export const PublicBroker = Type.Object(
  {
    serviceBrokerId: Type.String(),
    serviceProfileUrl: Type.String(),
    name: Type.String(),
    avatar: Nullable(PublicImage),
    bio: Nullable(Type.String()),
    website: Nullable(Type.String()),
    linkedInUrl: Nullable(Type.String()),
    licenses: Type.Array(License),
    serviceAreas: Type.Array(ServiceArea),
    listings: Type.Array(PublicListingSummary),
  },
  { additionalProperties: true },
);
export type PublicBroker = Static<typeof PublicBroker>;

export const SEARCH_SORTS = ["relevance", "newest", "price_asc", "price_desc"] as const;
export type SearchSort = (typeof SEARCH_SORTS)[number];
export const SEARCH_PAGE = { default: 20, max: 50 } as const;
/** "within N miles (or km) of": the radius's default and largest value. */
export const SEARCH_RADIUS = { default: 25, max: 500 } as const;
export const RADIUS_UNITS = ["mi", "km"] as const;
export type RadiusUnit = (typeof RADIUS_UNITS)[number];
/** "listed in the last N days": the largest N. */
export const LISTED_WITHIN_DAYS_MAX = 365;

/**
 * The asking-price bands the search counts listings in (facets.priceBand), as [from, below): each band holds the
 * prices from `from` up to, not including, `below`; the last has no upper end.
 */
export const PRICE_BANDS: readonly { from: number; below: number | null }[] = [
  { from: 0, below: 100_000 },
  { from: 100_000, below: 250_000 },
  { from: 250_000, below: 500_000 },
  { from: 500_000, below: 1_000_000 },
  { from: 1_000_000, below: 2_500_000 },
  { from: 2_500_000, below: 5_000_000 },
  { from: 5_000_000, below: null },
];

// The search route trims every value and treats an empty one as absent; the document shows exactly that.
const trimmed = (core: string) => `^${TRIMMED}*(?:${core})?${TRIMMED}*$`;
const PRICE = "0*(?:[0-9]{1,12}(?:\\.[0-9]{1,2})?|1000000000000(?:\\.0{1,2})?)";
const searchText = (description: string) =>
  Type.String({
    description: `${description}; at most 200 characters after trimming`,
    [DOCUMENTED_ONLY]: { maxLength: 200 },
  });

/**
 * Query of GET /v1/listings. Every value arrives as a string and the route parses it (with its own messages),
 * so the rules are documented-only keywords here (see DOCUMENTED_ONLY).
 */
export const SearchQuery = Type.Object(
  {
    q: Type.Optional(searchText("Full-text query over title and description")),
    businessType: Type.Optional(searchText("Exact business type, case-insensitive")),
    state: Type.Optional(searchText("Exact state, case-insensitive")),
    city: Type.Optional(searchText("Exact city, case-insensitive (listings that hide their city never match)")),
    minPrice: Type.Optional(
      Type.String({
        description: "Lowest asking price: a number from 0 to 1000000000000 with at most 2 decimals",
        [DOCUMENTED_ONLY]: { pattern: trimmed(PRICE) },
      }),
    ),
    maxPrice: Type.Optional(
      Type.String({
        description: "Highest asking price, like minPrice; not below minPrice (400)",
        [DOCUMENTED_ONLY]: { pattern: trimmed(PRICE) },
      }),
    ),
    minRevenue: Type.Optional(
      Type.String({
        description: "Lowest yearly revenue, like minPrice (listings without the figure never match)",
        [DOCUMENTED_ONLY]: { pattern: trimmed(PRICE) },
      }),
    ),
    maxRevenue: Type.Optional(
      Type.String({
        description: "Highest yearly revenue, like minPrice; not below minRevenue (400)",
        [DOCUMENTED_ONLY]: { pattern: trimmed(PRICE) },
      }),
    ),
    minSde: Type.Optional(
      Type.String({
        description: "Lowest seller's discretionary earnings, like minPrice (listings without the figure never match)",
        [DOCUMENTED_ONLY]: { pattern: trimmed(PRICE) },
      }),
    ),
    maxSde: Type.Optional(
      Type.String({
        description: "Highest seller's discretionary earnings, like minPrice; not below minSde (400)",
        [DOCUMENTED_ONLY]: { pattern: trimmed(PRICE) },
      }),
    ),
    financingAvailable: Type.Optional(
      Type.String({
        description: "true: only listings offering seller financing; false: only listings that do not",
        [DOCUMENTED_ONLY]: { pattern: trimmed("true|false") },
      }),
    ),
    underContract: Type.Optional(
      Type.String({
        description: "true: only listings under contract; false: leave them out; omitted: both",
        [DOCUMENTED_ONLY]: { pattern: trimmed("true|false") },
      }),
    ),
    sbaPrequalified: Type.Optional(
      Type.String({
        description:
          "true: only listings pre-qualified for an SBA loan (financing.sbaPrequalified); false: only those not",
        [DOCUMENTED_ONLY]: { pattern: trimmed("true|false") },
      }),
    ),
    realEstateIncluded: Type.Optional(
      Type.String({
        description:
          "true: only listings whose property is owned and sold with the business (property.propertyKind OWNED); false: only those not",
        [DOCUMENTED_ONLY]: { pattern: trimmed("true|false") },
      }),
    ),
    priceReduced: Type.Optional(
      Type.String({
        description: `true: only listings whose asking price went down in the last ${PRICE_REDUCED_DAYS} days; false: only those not`,
        [DOCUMENTED_ONLY]: { pattern: trimmed("true|false") },
      }),
    ),
    listedWithinDays: Type.Optional(
      Type.String({
        description: `Only listings that went live in the last N days: an integer from 1 to ${LISTED_WITHIN_DAYS_MAX}`,
        // 1 to 365 (LISTED_WITHIN_DAYS_MAX), leading zeros allowed, as the route reads it.
        [DOCUMENTED_ONLY]: { pattern: trimmed("0*(?:[1-9][0-9]?|[12][0-9]{2}|3[0-5][0-9]|36[0-5])") },
      }),
    ),
    near: Type.Optional(
      searchText(
        "Only listings within radius of this place: a 5-digit US ZIP code, 'City, ST', 'City, State', 'City, country code' or a city; an unknown place is refused (400). Listings that show only their state are never near anywhere",
      ),
    ),
    radius: Type.Optional(
      Type.String({
        description: `With near: the distance, a number from 1 to ${SEARCH_RADIUS.max} (default ${SEARCH_RADIUS.default}); without near, refused (400)`,
        // 1 to 500 (SEARCH_RADIUS.max), at most two decimals, as the route reads it.
        [DOCUMENTED_ONLY]: {
          pattern: trimmed("0*(?:[1-9][0-9]?(?:\\.[0-9]{1,2})?|[1-4][0-9]{2}(?:\\.[0-9]{1,2})?|500(?:\\.0{1,2})?)"),
        },
      }),
    ),
    radiusUnit: Type.Optional(
      Type.String({
        description: `The radius's unit: ${RADIUS_UNITS.join(" or ")} (default mi)`,
        [DOCUMENTED_ONLY]: { pattern: trimmed(RADIUS_UNITS.join("|")) },
      }),
    ),
    sort: Type.Optional(
      Type.String({
        description: `One of ${SEARCH_SORTS.join(", ")}; default relevance with q, else newest`,
        [DOCUMENTED_ONLY]: { pattern: trimmed(SEARCH_SORTS.join("|")) },
      }),
    ),
    cursor: Type.Optional(
      PageCursor(
        "Opaque; nextCursor of the previous page, with the same q, filters and sort (anything else, an empty value included, is refused with 400)",
      ),
    ),
    limit: Type.Optional(
      Type.String({
        description: `1-${SEARCH_PAGE.max}, default ${SEARCH_PAGE.default}`,
        [DOCUMENTED_ONLY]: { pattern: trimmed(`0*(?:[1-9]|[1-4][0-9]|${SEARCH_PAGE.max})`) },
      }),
    ),
  },
  // Unknown parameters are refused with 400 naming them.
  { additionalProperties: false, description: "Unknown parameters are refused" },
);

const FacetValue = Type.Object(
  { value: Type.String(), count: Type.Integer({ minimum: 0 }) },
  { additionalProperties: true },
);

/**
 * Counts of the matching listings per business type, state and asking-price band. Each facet counts with every
 * filter of the search but its own (so the other values of a filter in use still show what choosing them would
 * find); from the search index, which may lag PostgreSQL by a moment.
 */
export const SearchFacets = Type.Object(
  {
    businessType: Type.Array(FacetValue, { description: "Most listings first; spelled as a listing spells it" }),
    state: Type.Array(FacetValue, { description: "Most listings first" }),
    priceBand: Type.Array(
      Type.Object(
        {
          from: Type.Number(),
          below: Nullable(Type.Number({ description: "Prices below this; null: no upper end" })),
          count: Type.Integer({ minimum: 0 }),
        },
        { additionalProperties: true },
      ),
      { description: "Every band of the asking price, in order, also those with no listing" },
    ),
  },
  { additionalProperties: true },
);
export type SearchFacets = Static<typeof SearchFacets>;

export const SearchResponse = Type.Object(
  {
    status: Type.Literal("success"),
    total: Type.Integer(),
    results: Type.Array(PublicListingSummary),
    nextCursor: Nullable(Type.String()),
    facets: SearchFacets,
  },
  { additionalProperties: true },
);
export type SearchResponse = Static<typeof SearchResponse>;

/**
 * One listing in the search index (written by the indexer, read by the API): public fields only. URLs are not
 * stored, since they depend on PUBLIC_BASE_URL; photos are not stored, since they become ready later.
 */
export interface ListingSearchDocument {
  serviceListingId: number;
  title: string | null;
  /** The optimized (rewritten) description. */
  description: string | null;
  businessType: string;
  status: ListingStatus;
  underContract: boolean;
  location: PublicLocation;
  financials: Static<typeof PublicFinancials>;
  /** financing.financingAvailable is true (absent in documents indexed before the field existed). */
  financingAvailable?: boolean;
  /** financing.sbaPrequalified is true (absent in documents indexed before issue 41). */
  sbaPrequalified?: boolean;
  /** property.propertyKind is OWNED: the real estate goes with the business (absent before issue 41). */
  realEstateIncluded?: boolean;
  /** Where the public part of the address is (ZIP shown, else city; @pss/geo): absent when only the state is public or the place is unknown. */
  geo?: { lat: number; lon: number };
  /** When the asking price last went down and stayed down (@pss/database queries price-reduced.ts); null: never. */
  priceReducedAt?: string | null;
  establishedAt: string | null;
  broker: { serviceBrokerId: string; name: string };
  /** When the listing last went live (moved into a buyer-visible status); "newest" sorts by it. */
  listedAt: string;
  updatedAt: string;
}

const FINANCIAL_FIELDS = ["askingPrice", "revenue", "sde", "inventory", "ffande"] as const;

/** The five public money fields, numbers only. */
export function publicFinancials(f: Record<string, unknown> | null | undefined): Static<typeof PublicFinancials> {
  const out: Static<typeof PublicFinancials> = {};
  for (const k of FINANCIAL_FIELDS) if (typeof f?.[k] === "number") out[k] = f[k] as number;
  return out;
}
