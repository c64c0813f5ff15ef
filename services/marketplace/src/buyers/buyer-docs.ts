// The OpenAPI prose of the buyer routes (buyer-routes.ts), kept out of the route definitions so
// those read as code. The document (GET /partner/v1/openapi.json) shows each text exactly as written here.
import { ErrorMessages, PRICE_BANDS } from "@pss/contracts";

/** Route descriptions, by method and path. */
export const BUYER_DOCS = {
  "GET /v1/listings":
    "Full text over title and description, exact filters, sorts by relevance, newest or price; page with " +
    "nextCursor. Every answer counts the matching listings per business type, state and asking-price band " +
    "(facets; each facet counts with every filter but its own). near with radius and radiusUnit finds listings " +
    "within that distance of a US ZIP code or a city (coordinates from GeoNames, CC BY 4.0, and the U.S. Census " +
    "Bureau's ZIP code gazetteer); listings that show only their state are never near anywhere. priceReduced: " +
    "the asking price went down in the last 30 days. Addresses are shown as each listing's visibility allows. " +
    "503 while search is " +
    "unavailable. Rules beyond the schema (they span two parameters; 400 with details [{path, message}] " +
    "naming the lower bound): minPrice must not be above maxPrice, minRevenue not above maxRevenue, " +
    "minSde not above maxSde, radius and radiusUnit only with near. A cursor is valid only as the nextCursor of " +
    "the same search (same q, filters and sort).",
} as const;

const LOCATION = { state: "TX", country: "US", visibility: "SHOW_CITY_STATE", city: "Austin" };
const FINANCIALS = { askingPrice: 450000, revenue: 1200000, sde: 210000 };
const BROKER = {
  serviceBrokerId: "77",
  name: "Jane Broker",
  serviceProfileUrl: "https://market.example.com/brokers/77",
};
const HIT = {
  serviceListingId: 1042,
  serviceListingUrl: "https://market.example.com/listings/1042",
  title: "Taqueria on South Congress",
  businessType: "Restaurant",
  status: "FOR_SALE",
  underContract: false,
  location: LOCATION,
  financials: FINANCIALS,
  excerpt: null,
  photo: null,
  broker: BROKER,
  listedAt: "2026-05-01T12:00:01.310Z",
  priceReduced: false,
};
const FACETS = {
  businessType: [{ value: "Restaurant", count: 1 }],
  state: [
    { value: "TX", count: 1 },
    { value: "OK", count: 2 },
  ],
  priceBand: PRICE_BANDS.map((band) => ({ ...band, count: band.from === 250_000 ? 1 : 0 })),
};
const LISTING_NOT_FOUND = {
  summary: "No listing buyers see has this ID",
  value: { status: "error", error: ErrorMessages.listingNotFound },
};

/** Each route's examples (@pss/http-kit openapi-detail.ts, OperationExamples), by method and path. */
export const BUYER_EXAMPLES = {
  "GET /v1/listings": {
    request: {
      summary: "Restaurants in Texas, newest first",
      query: { q: "taqueria", state: "TX", near: "Austin, TX", radius: "50", sort: "newest", limit: "20" },
    },
    responses: {
      200: {
        summary: "One page of hits, with the counts beside it",
        value: { status: "success", total: 1, results: [HIT], nextCursor: null, facets: FACETS },
      },
      400: {
        summary: "A parameter out of its range",
        value: {
          status: "error",
          error: "limit must be an integer from 1 to 50",
          details: [{ path: "limit", message: "must be an integer from 1 to 50" }],
        },
      },
    },
  },
  "GET /v1/listings/:serviceListingId": {
    request: { summary: "Listing 1042 as buyers see it", params: { serviceListingId: 1042 } },
    responses: {
      200: {
        summary: "Public fields only",
        value: {
          status: "success",
          listing: {
            serviceListingId: 1042,
            serviceListingUrl: "https://market.example.com/listings/1042",
            title: "Taqueria on South Congress",
            description: null,
            businessType: "Restaurant",
            status: "FOR_SALE",
            underContract: false,
            location: LOCATION,
            establishedAt: null,
            financials: FINANCIALS,
            property: {},
            financing: {},
            photos: [],
            broker: { ...BROKER, avatar: null },
            listedAt: "2026-05-01T12:00:01.310Z",
            updatedAt: "2026-05-01T12:00:01.310Z",
            priceReduced: false,
          },
        },
      },
      404: LISTING_NOT_FOUND,
    },
  },
  "GET /v1/brokers/:serviceBrokerId": {
    request: { summary: "Broker 77's profile", params: { serviceBrokerId: 77 } },
    responses: {
      200: {
        summary: "No e-mail or phone; the broker's listings buyers see",
        value: {
          status: "success",
          broker: {
            serviceBrokerId: "77",
            serviceProfileUrl: "https://market.example.com/brokers/77",
            name: "Jane Broker",
            avatar: null,
            bio: null,
            website: null,
            linkedInUrl: null,
            licenses: [],
            serviceAreas: [],
            listings: [HIT],
          },
        },
      },
      404: { summary: "No broker has this ID", value: { status: "error", error: ErrorMessages.brokerNotFound } },
    },
  },
} as const;
