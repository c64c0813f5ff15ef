// The OpenAPI prose of the broker routes (broker-routes.ts), kept out of the route definitions so
// those read as code. The document (GET /partner/v1/openapi.json) shows each text exactly as written here.

/** Route descriptions, by method and path. */
export const BROKER_DOCS = {
  "PUT /brokers/:externalBrokerId":
    "201 when the external ID is new, 200 otherwise. An identical repeat changes nothing. Rules beyond " +
    "the types (400): each license gives a licenseNumber, a state or a country; each service area names a " +
    "city, a county or a state. With ?dryRun=true the body is checked exactly as a real PUT checks it " +
    "(the same 400 answers) and compared with the stored broker; a valid body gets 200 with a " +
    "DryRunResponse and nothing is written or announced. A test key (pss_test_) writes test records: " +
    "never shown to buyers, serviceProfileUrl is a signed preview link. Every answer (dry runs too) " +
    "carries warnings[] ({path, code, message}: what a buyer would miss; never blocking) and a " +
    "qualityScore 0-100 (rubric in docs/partner-api.md).",
  "GET /brokers/:externalBrokerId/history":
    "One entry per version a PUT wrote (a broker PUT, or a listing PUT carrying the broker inline; " +
    "identical repeats write none): when, the key ID and request ID, and each changed field path with its " +
    "old and new value (texts over 500 characters cut, marked truncated). Entries are kept for the " +
    "history retention (180 days by default). Page with nextCursor.",
} as const;

const BROKER_WARNINGS = [
  {
    path: "avatarUrl",
    code: "AVATAR_MISSING",
    message: "No photo of the broker: profiles with a face get more inquiries; send avatarUrl",
  },
  { path: "profile.bio", code: "BIO_MISSING", message: "No bio: tell buyers who the broker is and what they sell" },
  {
    path: "licenses",
    code: "LICENSE_MISSING",
    message: "No license: buyers in many states look for a licensed broker; send licenses",
  },
];

/** The broker the examples write, and what the API keeps of it. */
export const EXAMPLE_BROKER = { name: "Jane Broker", email: "jane@acme-brokers.example", phone: "+1 512 555 0100" };
const BROKER_RECORD = {
  externalBrokerId: "B-7",
  serviceBrokerId: "77",
  serviceProfileUrl: "https://market.example.com/brokers/77",
  mode: "live",
  officeId: 31,
  ...EXAMPLE_BROKER,
  avatarUrl: null,
  forwardingEmail: null,
  profile: {},
  licenses: [],
  serviceAreas: [],
  avatar: null,
  warnings: BROKER_WARNINGS,
  qualityScore: 30,
  createdAt: "2026-05-01T12:00:00.120Z",
  updatedAt: "2026-05-01T12:00:00.120Z",
};
const BROKER_CREATED = {
  status: "success",
  message: "Broker created",
  serviceBrokerId: "77",
  serviceProfileUrl: "https://market.example.com/brokers/77",
  warnings: BROKER_WARNINGS,
  qualityScore: 30,
};

/** Each route's examples (docs/openapi.ts, OperationExamples), by method and path. */
export const BROKER_EXAMPLES = {
  "PUT /brokers/:externalBrokerId": {
    request: { summary: "Create broker B-7", params: { externalBrokerId: "B-7" }, body: EXAMPLE_BROKER },
    responses: {
      201: { summary: "Created", value: BROKER_CREATED },
      200: {
        summary: "The same PUT again: nothing changes",
        value: { ...BROKER_CREATED, message: "Broker updated" },
      },
      400: {
        summary: "A rule broken",
        value: {
          status: "error",
          error: "email: must be a valid e-mail address",
          details: [{ path: "email", message: "must be a valid e-mail address" }],
        },
      },
    },
  },
  "GET /brokers/:externalBrokerId": {
    request: { summary: "Read broker B-7 back", params: { externalBrokerId: "B-7" } },
    responses: {
      200: { summary: "As stored", value: { status: "success", broker: BROKER_RECORD } },
      404: { summary: "No broker of yours has this ID", value: { status: "error", error: "Broker not found" } },
    },
  },
  "GET /brokers/:externalBrokerId/history": {
    request: { summary: "The newest entry", params: { externalBrokerId: "B-7" }, query: { limit: "1" } },
    responses: {
      200: {
        summary: "One page",
        value: {
          status: "success",
          results: [
            {
              version: 1,
              changedAt: "2026-05-01T12:00:00.120Z",
              keyId: "7",
              requestId: "2e844539-7032-4b88-90c8-13e9f98bacd6",
              created: true,
              changes: [
                { path: "email", from: null, to: "jane@acme-brokers.example" },
                { path: "name", from: null, to: "Jane Broker" },
                { path: "phone", from: null, to: "+1 512 555 0100" },
              ],
            },
          ],
          nextCursor: null,
        },
      },
    },
  },
  "GET /brokers": {
    request: { summary: "The first page of one", query: { limit: "1" } },
    responses: {
      200: {
        summary: "One page; follow nextCursor",
        value: { status: "success", results: [BROKER_RECORD], nextCursor: "WyJ3MSIsIjI0MzkiLCI3NyIsbnVsbF0" },
      },
    },
  },
  "POST /brokers/batch": {
    request: {
      summary: "Two brokers in one request",
      body: {
        items: [
          {
            externalBrokerId: "B-8",
            broker: { name: "Sam Seller", email: "sam@acme-brokers.example", phone: "+1 512 555 0101" },
          },
          { externalBrokerId: "B-9", broker: { name: "Ann Agent", email: "not an address" } },
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
              externalBrokerId: "B-8",
              httpStatus: 201,
              changed: true,
              body: {
                ...BROKER_CREATED,
                serviceBrokerId: "78",
                serviceProfileUrl: "https://market.example.com/brokers/78",
              },
            },
            {
              externalBrokerId: "B-9",
              httpStatus: 400,
              changed: false,
              body: {
                status: "error",
                error: "email: must be a valid e-mail address",
                details: [{ path: "email", message: "must be a valid e-mail address" }],
              },
            },
          ],
        },
      },
    },
  },
} as const;
