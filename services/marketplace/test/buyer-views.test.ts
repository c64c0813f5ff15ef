import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uniqueName } from "../../../test/support/env.ts";
import { call, sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";

let api: ApiHarness;
let partner: Partner;
let brokerExternalId: string;
let serviceBrokerId: string;

beforeAll(async () => {
  api = await startApi({ relay: false });
  partner = await api.createPartner();
  brokerExternalId = uniqueName("broker");
  const res = await partner.put(
    `/partner/v1/brokers/${brokerExternalId}`,
    sample.broker({
      profile: {
        bio: "Twenty years selling Texas businesses. Call me at 512-555-0177!",
        website: "https://jane.example.com",
        linkedInUrl: "https://www.linkedin.com/in/jane",
      },
    }),
  );
  serviceBrokerId = res.body.serviceBrokerId;
});
afterAll(() => api.stop());

const address = { streetAddress1: "1 Congress Ave", city: "Austin", state: "TX", postalCode: "78701", country: "US" };

async function createListing(overrides: Record<string, unknown> = {}): Promise<{ id: number; externalId: string }> {
  const externalId = uniqueName("listing");
  const res = await partner.put(`/partner/v1/listings/${externalId}`, sample.listing(brokerExternalId, overrides));
  expect(res.status).toBe(201);
  return { id: res.body.serviceListingId, externalId };
}

const publicListing = (id: number | string) => call(api.marketplaceUrl, "GET", `/v1/listings/${id}`);

describe("GET /v1/listings/{serviceListingId}", () => {
  test("a visible listing shows its public fields, no authentication needed", async () => {
    const { id } = await createListing({
      location: { ...address, visibility: "SHOW_FULL_ADDRESS" },
      establishedAt: "2015-06-01T00:00:00Z",
    });
    const res = await publicListing(id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: "success",
      listing: {
        serviceListingId: id,
        serviceListingUrl: `https://market.example.test/listings/${id}`,
        title: "Profitable taqueria downtown",
        description: "Established restaurant with loyal customers.",
        businessType: "Restaurant",
        status: "FOR_SALE",
        underContract: false,
        location: { ...address, visibility: "SHOW_FULL_ADDRESS" },
        establishedAt: "2015-06-01T00:00:00.000Z",
        financials: { askingPrice: 450000, revenue: 900000, sde: 180000 },
        property: {
          propertyKind: "RENTED",
          areaSqft: 2400,
          rentData: { amount: 6500, frequency: "MONTHLY", leaseRenewable: true },
        },
        financing: { financingAvailable: true, sbaPrequalified: false },
        photos: [],
        broker: {
          serviceBrokerId,
          name: "Jane Broker",
          serviceProfileUrl: `https://market.example.test/brokers/${serviceBrokerId}`,
          avatar: null,
        },
        listedAt: expect.any(String),
        updatedAt: expect.any(String),
        // Issue 41: the badge (its price never went down).
        priceReduced: false,
      },
    });
  });

  test("each visibility level shows exactly its allowed address fields", async () => {
    const expected = {
      SHOW_FULL_ADDRESS: { ...address, visibility: "SHOW_FULL_ADDRESS" },
      SHOW_CITY_STATE: { city: "Austin", state: "TX", country: "US", visibility: "SHOW_CITY_STATE" },
      SHOW_STATE_ONLY: { state: "TX", country: "US", visibility: "SHOW_STATE_ONLY" },
    };
    for (const [visibility, location] of Object.entries(expected)) {
      const { id } = await createListing({ location: { ...address, visibility } });
      const res = await publicListing(id);
      expect(res.body.listing.location).toEqual(location);
      const text = JSON.stringify(res.body);
      if (visibility !== "SHOW_FULL_ADDRESS") expect(text).not.toMatch(/Congress|78701/);
      if (visibility === "SHOW_STATE_ONLY") expect(text).not.toContain("Austin");
    }
  });

  test("DRAFT, SOLD and ARCHIVED listings are not found, at once after the PUT", async () => {
    const { id, externalId } = await createListing();
    expect((await publicListing(id)).status).toBe(200);
    for (const status of ["SOLD", "ARCHIVED", "DRAFT"]) {
      await partner.put(`/partner/v1/listings/${externalId}`, { status });
      const res = await publicListing(id);
      expect({ status, code: res.status, body: res.body }).toEqual({
        status,
        code: 404,
        body: { status: "error", error: "Listing not found" },
      });
    }
    await partner.put(`/partner/v1/listings/${externalId}`, { status: "UNDER_CONTRACT" });
    const back = await publicListing(id);
    expect(back.status).toBe(200);
    expect(back.body.listing).toMatchObject({ status: "UNDER_CONTRACT", underContract: true });
  });

  test("unknown and malformed IDs are not found", async () => {
    for (const id of ["999999999999", "abc", "0", "1e3", "12345678901234567890"]) {
      const res = await publicListing(id);
      expect({ id, status: res.status, body: res.body }).toEqual({
        id,
        status: 404,
        body: { status: "error", error: "Listing not found" },
      });
    }
  });

  test("only ready photos are shown, ordered by sortKey, with their variants; the partner's URLs are not", async () => {
    const { id } = await createListing({
      photos: [
        { url: "https://images.example.com/c.jpg", sortKey: 3 },
        { url: "https://images.example.com/a.jpg", sortKey: 1 },
        { url: "https://images.example.com/b.jpg", sortKey: 2 },
      ],
    });
    // Stored as media keys (what the media service writes); buyers get URLs under PUBLIC_BASE_URL.
    const key = (n: string, ext: string) => `${n.repeat(64)}.${ext}`;
    const stored = (n: string) => [
      { width: 400, height: 300, format: "webp", key: key(n, "webp") },
      { width: 400, height: 300, format: "jpeg", key: key(n, "jpg") },
    ];
    const variants = (n: string) => [
      { width: 400, height: 300, format: "webp", url: `https://market.example.test/media/${key(n, "webp")}` },
      { width: 400, height: 300, format: "jpeg", url: `https://market.example.test/media/${key(n, "jpg")}` },
    ];
    for (const n of ["a", "c"]) {
      await api.sql`UPDATE listing_photos SET state = 'ready', width = 1600, height = 1200, variants = ${api.sql.json(stored(n))}
                    WHERE listing_id = ${id} AND url = ${`https://images.example.com/${n}.jpg`}`;
    }
    await api.sql`UPDATE listing_photos SET state = 'failed', failure_reason = 'not an image' WHERE listing_id = ${id} AND url = 'https://images.example.com/b.jpg'`;
    const { body } = await publicListing(id);
    expect(body.listing.photos).toEqual([
      { sortKey: 1, width: 1600, height: 1200, variants: variants("a") },
      { sortKey: 3, width: 1600, height: 1200, variants: variants("c") },
    ]);
    expect(JSON.stringify(body)).not.toContain("images.example.com");
  });

  test("buyers read the description with contact details removed; the partner's original is untouched", async () => {
    const original = "Great spot.  Call 512-555-0123 or email owner@taqueria.example.com!";
    const { id, externalId } = await createListing({ description: original });
    expect((await publicListing(id)).body.listing.description).toBe("Great spot.");
    expect((await partner.get(`/partner/v1/listings/${externalId}`)).body.listing.description).toBe(original);
    // Once the indexer stored its rewrite (possibly from an LLM), buyers get that one.
    await api.sql`UPDATE listings SET description_optimized = 'A great spot.' WHERE id = ${id}`;
    expect((await publicListing(id)).body.listing.description).toBe("A great spot.");
  });
});

describe("GET /v1/brokers/{serviceBrokerId}", () => {
  test("the public profile: name, bio without contact details, links, licenses, areas and visible listings; never e-mail or phone", async () => {
    const broker = uniqueName("broker");
    const put = await partner.put(
      `/partner/v1/brokers/${broker}`,
      sample.broker({
        name: "Pat Profile",
        avatarUrl: "https://images.example.com/pat.jpg",
        profile: { bio: "Call me at 512-555-0177!\n\nI sell bakeries.", website: "https://pat.example.com" },
      }),
    );
    const id = put.body.serviceBrokerId;
    const visible = (
      await partner.put(
        `/partner/v1/listings/${uniqueName("listing")}`,
        sample.listing(broker, { title: "Visible one" }),
      )
    ).body.serviceListingId;
    await partner.put(
      `/partner/v1/listings/${uniqueName("listing")}`,
      sample.listing(broker, { title: "Draft one", status: "DRAFT" }),
    );
    await partner.put(
      `/partner/v1/listings/${uniqueName("listing")}`,
      sample.listing(broker, { title: "Sold one", status: "SOLD" }),
    );

    const res = await call(api.marketplaceUrl, "GET", `/v1/brokers/${id}`);
    expect(res.status).toBe(200);
    expect(res.body.broker).toEqual({
      serviceBrokerId: id,
      serviceProfileUrl: `https://market.example.test/brokers/${id}`,
      name: "Pat Profile",
      avatar: null,
      bio: "I sell bakeries.",
      website: "https://pat.example.com",
      linkedInUrl: null,
      licenses: [{ licenseNumber: "TX-123", state: "TX", country: "US" }],
      serviceAreas: [{ city: "Austin", state: "TX", country: "US" }],
      listings: [
        expect.objectContaining({
          serviceListingId: visible,
          title: "Visible one",
          location: { city: "Austin", state: "TX", country: "US", visibility: "SHOW_CITY_STATE" },
        }),
      ],
    });
    expect(JSON.stringify(res.body)).not.toMatch(/jane\.broker@example\.com|leads@crm|555|images\.example\.com/);
  });

  test("a ready avatar shows its variants", async () => {
    const broker = uniqueName("broker");
    const id = (
      await partner.put(
        `/partner/v1/brokers/${broker}`,
        sample.broker({ avatarUrl: "https://images.example.com/face.jpg" }),
      )
    ).body.serviceBrokerId;
    const variants = [
      { width: 200, height: 200, format: "jpg", url: "https://market.example.test/media/face-200.jpg" },
    ];
    await api.sql`UPDATE brokers SET avatar_state = 'ready', avatar_width = 800, avatar_height = 800, avatar_variants = ${api.sql.json(variants)} WHERE id = ${id}`;
    expect((await call(api.marketplaceUrl, "GET", `/v1/brokers/${id}`)).body.broker.avatar).toEqual({
      width: 800,
      height: 800,
      variants,
    });
  });

  test("unknown and malformed IDs are not found", async () => {
    for (const id of ["999999999999", "jane", "-1"]) {
      const res = await call(api.marketplaceUrl, "GET", `/v1/brokers/${id}`);
      expect({ id, status: res.status, body: res.body }).toEqual({
        id,
        status: 404,
        body: { status: "error", error: "Broker not found" },
      });
    }
  });
});
