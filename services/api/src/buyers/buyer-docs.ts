// The OpenAPI prose of the buyer routes (buyer-routes.ts), kept out of the route definitions so
// those read as code. The document (GET /partner/v1/openapi.json) shows each text exactly as written here.
import { ErrorMessages } from "@pss/contracts";

/** Route descriptions, by method and path. */
export const BUYER_DOCS = {
  "GET /v1/listings":
    "Full text over title and description, exact filters, sorts by relevance, newest or price; page with " +
    "nextCursor. Addresses are shown as each listing's visibility allows. 503 while search is " +
    "unavailable. Rules beyond the schema (they span two parameters; 400 with details [{path, message}] " +
    "naming the lower bound): minPrice must not be above maxPrice, minRevenue not above maxRevenue, " +
    "minSde not above maxSde. A cursor is valid only as the nextCursor of the same search (same q, " +
    "filters and sort).",
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
};
const LISTING_NOT_FOUND = {
  summary: "No listing buyers see has this ID",
  value: { status: "error", error: ErrorMessages.listingNotFound },
};

/** Each route's examples (docs/openapi.ts, OperationExamples), by method and path. */
export const BUYER_EXAMPLES = {
  "GET /v1/listings": {
    request: {
      summary: "Restaurants in Texas, newest first",
      query: { q: "taqueria", state: "TX", sort: "newest", limit: "20" },
    },
    responses: {
      200: { summary: "One page of hits", value: { status: "success", total: 1, results: [HIT], nextCursor: null } },
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
