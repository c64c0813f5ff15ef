import { describe, expect, test } from "bun:test";
import { isDateTime as serverIsDateTime } from "@pss/contracts";
import { isDateTime } from "./date-time.ts";
import { bodyFieldType, createRecordValidator, fieldPath, LIMITS, problemsSentence } from "./record-validator.ts";

const validator = createRecordValidator();
const broker = {
  name: "Jane Broker",
  email: "jane@example.com",
  licenses: [{ licenseNumber: "TX-1", state: "TX", country: "US" }],
  serviceAreas: [{ city: "Austin", state: "TX", country: "US" }],
};
const listing = {
  brokerExternalId: "B-1",
  status: "FOR_SALE",
  businessType: "Restaurant",
  location: { city: "Austin", state: "TX", country: "US", visibility: "SHOW_CITY_STATE" },
  financials: { askingPrice: 450000 },
  establishedAt: "2012-03-01T00:00:00Z",
  photos: [{ url: "https://images.example.com/1.jpg", sortKey: 1 }],
};

describe("record validator (the OpenAPI document's schemas)", () => {
  test("valid brokers and listings have no problems, including a status-only update and clearing with null", () => {
    expect(validator.validateBody("broker", broker)).toEqual([]);
    expect(validator.validateBody("listing", listing)).toEqual([]);
    expect(validator.validateBody("listing", { status: "SOLD" })).toEqual([]);
    expect(validator.validateBody("listing", { title: null, financials: { sde: null }, photos: null })).toEqual([]);
  });

  test("each problem names its field path the way the API does", () => {
    const problems = validator.validateBody("listing", {
      ...listing,
      status: "LIVE",
      title: "x".repeat(201),
      financials: { askingPrice: "cheap" },
      location: { ...listing.location, country: "usa" },
      photos: [{ url: "ftp://images.example.com/1.jpg", sortKey: 1 }],
      colour: "red",
    });
    expect(Object.fromEntries(problems.map((p) => [p.path, p.message]))).toEqual({
      colour: "is not a known field",
      status: "must be one of DRAFT, FOR_SALE, REVIEWING_OFFERS, PENDING_CONTRACT, UNDER_CONTRACT, SOLD, ARCHIVED",
      title: "must be at most 200 characters",
      "financials.askingPrice": "must be a number",
      "location.country": "must be an ISO 3166-1 alpha-2 country code, upper case (e.g. US)",
      "photos[0].url": "must be an absolute http(s) URL",
    });
  });

  test("required fields, null where a value must exist, and text rules", () => {
    expect(validator.validateBody("broker", { name: "A" })).toEqual([{ path: "email", message: "is required" }]);
    expect(validator.validateBody("listing", { status: null })[0]).toEqual({
      path: "status",
      message: expect.stringMatching(/^cannot be null; it must be one of DRAFT/),
    });
    expect(validator.validateBody("broker", { ...broker, name: "Jane\u0007" })).toEqual([
      { path: "name", message: "must not contain control characters (found U+0007)" },
    ]);
    expect(validator.validateBody("broker", { ...broker, profile: { bio: "Line one\nLine two\ttabbed" } })).toEqual([]);
    expect(validator.validateBody("broker", { ...broker, name: "Jane \ud800" })).toEqual([
      { path: "name", message: "contains an unpaired UTF-16 surrogate" },
    ]);
    expect(validator.validateBody("broker", { ...broker, name: "\u{1F600}".repeat(200) })).toEqual([]);
    expect(validator.validateBody("broker", { ...broker, email: "jane" })).toEqual([
      { path: "email", message: "must be a valid e-mail address" },
    ]);
    expect(validator.validateBody("broker", { ...broker, licenses: [{}] })).toEqual([
      { path: "licenses[0]", message: "must not be empty (at least one of licenseNumber, state, country)" },
    ]);
    expect(validator.validateBody("broker", { ...broker, profile: 5 })).toEqual([
      { path: "profile", message: "must be an object" },
    ]);
    expect(validator.validateBody("broker", { ...broker, licenses: "TX" })).toEqual([
      { path: "licenses", message: "must be an array" },
    ]);
  });

  test("the rules the document states in words: one photo URL once, the same broker ID twice, non-empty licenses and areas", () => {
    const photo = { url: "https://images.example.com/1.jpg", sortKey: 1 };
    expect(validator.validateBody("listing", { photos: [photo, { ...photo, sortKey: 2 }] })).toEqual([
      { path: "photos[1].url", message: "repeats photos[0].url; each photo URL may appear once" },
    ]);
    expect(
      validator.validateBody("listing", { brokerExternalId: "B-1", broker: { ...broker, externalBrokerId: "B-2" } })[0]!
        .path,
    ).toBe("brokerExternalId");
    expect(validator.validateBody("broker", { ...broker, serviceAreas: [{ country: "US" }] })).toEqual([
      { path: "serviceAreas[0]", message: "must name a city, a county or a state" },
    ]);
    expect(
      validator.validateBody("listing", {
        broker: { ...broker, externalBrokerId: "B-2", licenses: [{ licenseNumber: null }] },
      }),
    ).toEqual([{ path: "broker.licenses[0]", message: "must give a licenseNumber, a state or a country" }]);
  });

  test("size and depth limits come from the document", () => {
    expect(LIMITS).toEqual({ maxBodyBytes: 1_048_576, maxDepth: 16 });
    const huge = { ...listing, description: "x".repeat(LIMITS.maxBodyBytes) };
    expect(validator.validateBody("listing", huge).map((p) => p.message)).toContainEqual(
      expect.stringContaining("is too large"),
    );
    expect(validator.validateBody("listing", [])).toEqual([{ path: "", message: "the body must be a JSON object" }]);
  });

  test("external IDs follow the path parameter's rule", () => {
    expect(validator.validateId("listing", "L-1_a.b")).toBeNull();
    expect(validator.validateId("listing", " L-1")?.path).toBe("externalListingId");
    expect(validator.validateId("broker", "..")?.path).toBe("externalBrokerId");
    expect(validator.validateId("broker", "x".repeat(129))).not.toBeNull();
  });

  test("field types for CSV cells are read from the schema", () => {
    expect(bodyFieldType("listing", ["financials", "askingPrice"])).toBe("number");
    expect(bodyFieldType("listing", ["photos"])).toBe("array");
    expect(bodyFieldType("listing", ["location", "country"])).toBe("string");
    expect(bodyFieldType("listing", ["status"])).toBe("string");
    expect(bodyFieldType("listing", ["financing", "financingAvailable"])).toBe("boolean");
    expect(bodyFieldType("listing", ["broker", "name"])).toBe("string");
    expect(bodyFieldType("broker", ["nope"])).toBeNull();
  });

  test("paths and sentences", () => {
    expect(fieldPath("/photos/0/url")).toBe("photos[0].url");
    expect(
      problemsSentence([
        { path: "a", message: "x" },
        { path: "", message: "y" },
        { path: "b", message: "z" },
        { path: "c", message: "w" },
      ]),
    ).toBe("a: x; y; b: z; and 1 more");
  });
});

test("the SDK's date-time rule is the server's: it never refuses what the API accepts", () => {
  const samples = [
    "2024-05-01T12:00:00Z",
    "2024-05-01T12:00Z",
    "2024-05-01t12:00:00z",
    "2024-05-01T12:00:00.123456789+02:00",
    "2024-05-01T12:00:00+0200",
    "2024-02-29T00:00:00Z",
    "2023-02-29T00:00:00Z",
    "2024-05-01T24:00:00Z",
    "2024-05-01T12:60:00Z",
    "2024-05-01T12:00:00",
    "2024-05-01",
    "0000-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z",
    "2024-13-01T00:00:00Z",
    " 2024-05-01T12:00:00Z",
    "2024-05-01T12:00:00.1234567890Z",
  ];
  for (const s of samples) expect([s, isDateTime(s)]).toEqual([s, serverIsDateTime(s)]);
});
