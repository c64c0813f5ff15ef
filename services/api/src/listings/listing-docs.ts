// The OpenAPI prose of the listing routes (listing-routes.ts), kept out of the route definitions so
// those read as code. The document (GET /partner/v1/openapi.json) shows each text exactly as written here.

export const DRY_RUN_ABOUT =
  "With ?dryRun=true the body is checked exactly as a real PUT checks it (the same 400 and 404 answers) " +
  "and compared with the stored record; a valid body gets 200 with a DryRunResponse and nothing is " +
  "written or announced.";

/** Route descriptions, by method and path. */
export const LISTING_DOCS = {
  "PUT /listings/:externalListingId":
    `201 when the external ID is new, 200 otherwise. With an inline broker, the broker is created or ` +
    `updated in the same transaction. An identical repeat changes nothing. Rules beyond the schema (they ` +
    `span fields or depend on what is stored; 400 with details [{path, message}] naming each field that ` +
    `breaks one): on create, status, businessType, location (city, state, country, visibility) and ` +
    `brokerExternalId or broker are required; brokerExternalId and broker.externalBrokerId, if both are ` +
    `sent, must be equal; each photo URL may appear once (details name the repeat, e.g. photos[1].url). ` +
    `${DRY_RUN_ABOUT} A test key (pss_test_) writes test records: never shown to buyers, ` +
    `serviceListingUrl is a signed preview link. Every answer (dry runs too) carries warnings[] ({path, ` +
    `code, message}: what a buyer would miss; never blocking) and a qualityScore 0-100, computed from the ` +
    `record as it stands after the write (photos count once processed); the rubric is in ` +
    `docs/partner-api.md.`,
  "GET /listings/:externalListingId/history":
    "One entry per version a PUT wrote (identical repeats write none): when, the key ID and request ID, " +
    "each changed field path with its old and new value (texts over 500 characters cut, marked " +
    "truncated), and the status move. Entries are kept for the history retention (180 days by default). " +
    "Page with nextCursor.",
} as const;

const LISTING_WARNINGS = [
  {
    path: "description",
    code: "DESCRIPTION_MISSING",
    message:
      "No description: buyers skip listings without one; describe the business, its history, staff and why it is for sale",
  },
  { path: "photos", code: "PHOTOS_TOO_FEW", message: "1 photo; listings with at least 5 get more inquiries" },
];

/** The listing the examples write (the partner guide's quickstart listing). */
export const EXAMPLE_LISTING = {
  brokerExternalId: "B-7",
  status: "FOR_SALE",
  businessType: "Restaurant",
  title: "Taqueria on South Congress",
  location: { city: "Austin", state: "TX", country: "US", visibility: "SHOW_CITY_STATE" },
  financials: { askingPrice: 450000, revenue: 1200000, sde: 210000 },
  photos: [{ url: "https://img.acme-brokers.example/front.jpg", sortKey: 1 }],
};
const LISTING_CREATED = {
  status: "success",
  message: "Listing created",
  serviceListingId: 1042,
  serviceListingUrl: "https://market.example.com/listings/1042",
  warnings: LISTING_WARNINGS,
  qualityScore: 56,
};
const LISTING_RECORD = {
  externalListingId: "L-1042",
  serviceListingId: 1042,
  serviceListingUrl: "https://market.example.com/listings/1042",
  mode: "live",
  brokerExternalId: "B-7",
  serviceBrokerId: "77",
  status: "FOR_SALE",
  businessType: "Restaurant",
  location: {
    streetAddress1: null,
    city: "Austin",
    state: "TX",
    postalCode: null,
    country: "US",
    visibility: "SHOW_CITY_STATE",
  },
  title: "Taqueria on South Congress",
  description: null,
  descriptionOptimized: null,
  establishedAt: null,
  financials: { askingPrice: 450000, revenue: 1200000, sde: 210000 },
  property: {},
  financing: {},
  photos: [
    {
      url: "https://img.acme-brokers.example/front.jpg",
      sortKey: 1,
      state: "pending",
      failureReason: null,
      warning: null,
      width: null,
      height: null,
      variants: [],
    },
  ],
  statusHistory: [{ from: null, to: "FOR_SALE", changedAt: "2026-05-01T12:00:01.310Z" }],
  searchIndex: { state: "pending" },
  warnings: LISTING_WARNINGS,
  qualityScore: 56,
  createdAt: "2026-05-01T12:00:01.310Z",
  updatedAt: "2026-05-01T12:00:01.310Z",
};

/** Each route's examples (docs/openapi.ts, OperationExamples), by method and path. */
export const LISTING_EXAMPLES = {
  "PUT /listings/:externalListingId": {
    request: {
      summary: "Create listing L-1042 of broker B-7",
      params: { externalListingId: "L-1042" },
      body: EXAMPLE_LISTING,
    },
    responses: {
      201: { summary: "Created", value: LISTING_CREATED },
      200: {
        summary: "The same PUT again: nothing changes",
        value: { ...LISTING_CREATED, message: "Listing updated" },
      },
      404: {
        summary: "brokerExternalId names no broker of yours (nothing written)",
        value: { status: "error", error: "Broker not found" },
      },
    },
  },
  "GET /listings/:externalListingId": {
    request: { summary: "Read listing L-1042 back", params: { externalListingId: "L-1042" } },
    responses: {
      200: { summary: "As stored, a moment after the PUT", value: { status: "success", listing: LISTING_RECORD } },
      404: { summary: "No listing of yours has this ID", value: { status: "error", error: "Listing not found" } },
    },
  },
  "GET /listings/:externalListingId/history": {
    request: { summary: "The newest entry", params: { externalListingId: "L-1042" }, query: { limit: "1" } },
    responses: {
      200: {
        summary: "One page",
        value: {
          status: "success",
          results: [
            {
              version: 1,
              changedAt: "2026-05-01T12:00:01.310Z",
              keyId: "7",
              requestId: "57ec3853-1bdd-4d56-aa5a-641d0e0244d3",
              created: true,
              changes: [
                { path: "brokerExternalId", from: null, to: "B-7" },
                { path: "businessType", from: null, to: "Restaurant" },
                { path: "status", from: null, to: "FOR_SALE" },
              ],
              statusChange: { from: null, to: "FOR_SALE" },
            },
          ],
          nextCursor: null,
        },
      },
    },
  },
  "GET /listings": {
    request: { summary: "The first page of one", query: { limit: "1" } },
    responses: {
      200: {
        summary: "One page; follow nextCursor",
        value: { status: "success", results: [LISTING_RECORD], nextCursor: "WyJ3MSIsIjI0NDYiLCIxMDQyIixudWxsXQ" },
      },
    },
  },
  "POST /listings/batch": {
    request: {
      summary: "Two listings in one request",
      body: {
        items: [
          { externalListingId: "L-1044", listing: { ...EXAMPLE_LISTING, title: "Deli downtown" } },
          { externalListingId: "L-1043", listing: { ...EXAMPLE_LISTING, brokerExternalId: "B-99" } },
        ],
      },
    },
    responses: {
      200: {
        summary: "One result per item",
        value: {
          status: "success",
          dryRun: false,
          counts: { created: 1, updated: 0, unchanged: 0, failed: 1 },
          results: [
            {
              externalListingId: "L-1044",
              httpStatus: 201,
              changed: true,
              body: {
                ...LISTING_CREATED,
                serviceListingId: 1044,
                serviceListingUrl: "https://market.example.com/listings/1044",
              },
            },
            {
              externalListingId: "L-1043",
              httpStatus: 404,
              changed: false,
              body: { status: "error", error: "Broker not found" },
            },
          ],
        },
      },
    },
  },
} as const;
