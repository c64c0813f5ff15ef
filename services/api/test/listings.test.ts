import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Topics } from "@pss/contracts";
import { uniqueName } from "../../../test/support/env.ts";
import { eventsOnTopic, waitForOutboxDrained } from "./support/events.ts";
import { sample, startApi, type ApiHarness, type Partner } from "./support/harness.ts";
import { allRecords } from "./support/record-pages.ts";

let api: ApiHarness;
let partner: Partner;
let brokerId: string;

beforeAll(async () => {
  api = await startApi();
  partner = await api.createPartner();
  brokerId = uniqueName("broker");
  expect((await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
});
afterAll(() => api.stop());

const newId = () => uniqueName("listing");
const row = async (serviceListingId: number) =>
  (
    await api.sql`SELECT version, updated_at, broker_id::text AS broker_id FROM listings WHERE id = ${serviceListingId}`
  )[0]!;
const countListings = async (externalId: string) =>
  (await api.sql`SELECT count(*)::int AS n FROM listings WHERE external_id = ${externalId}`)[0]!.n as number;

describe("PUT /partner/v1/listings/{externalListingId}", () => {
  test("a new external ID creates the listing: 201 with its integer ID and public URL", async () => {
    const res = await partner.put(`/partner/v1/listings/${newId()}`, sample.listing(brokerId));
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      status: "success",
      message: "Listing created",
      serviceListingId: expect.any(Number),
      serviceListingUrl: `https://market.example.test/listings/${res.body.serviceListingId}`,
      // Never blocking: the sample has 2 photos and a one-line description (rubric: 3 x 6 + 10 points).
      warnings: [
        { path: "description", code: "DESCRIPTION_TOO_SHORT", message: expect.stringContaining("44 characters") },
        { path: "photos", code: "PHOTOS_TOO_FEW", message: "2 photos; listings with at least 5 get more inquiries" },
      ],
      qualityScore: 72,
    });
    expect(Number.isInteger(res.body.serviceListingId)).toBe(true);
  });

  test("a known external ID updates it: 200 with the same ID and URL", async () => {
    const id = newId();
    const created = await partner.put(`/partner/v1/listings/${id}`, sample.listing(brokerId));
    const updated = await partner.put(`/partner/v1/listings/${id}`, sample.listing(brokerId, { title: "New title" }));
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ ...created.body, message: "Listing updated" });
  });

  test("the read-back returns the stored record, photos ordered by sortKey and pending, search index pending", async () => {
    const id = newId();
    const sent = sample.listing(brokerId, {
      photos: [
        { url: "https://images.example.com/b.jpg", sortKey: 5 },
        { url: "https://images.example.com/a.jpg", sortKey: 1 },
      ],
      establishedAt: "2015-06-01T00:00:00-05:00",
    });
    const { body: put } = await partner.put(`/partner/v1/listings/${id}`, sent);
    const { status, body } = await partner.get(`/partner/v1/listings/${id}`);
    expect(status).toBe(200);
    const l = body.listing;
    expect(l).toMatchObject({
      externalListingId: id,
      serviceListingId: put.serviceListingId,
      serviceListingUrl: put.serviceListingUrl,
      brokerExternalId: brokerId,
      status: "FOR_SALE",
      businessType: "Restaurant",
      title: sent.title,
      description: sent.description,
      establishedAt: "2015-06-01T05:00:00.000Z",
      location: sent.location,
      financials: sent.financials,
      property: sent.property,
      financing: sent.financing,
      searchIndex: { state: "pending" },
    });
    expect(l.photos.map((p: any) => [p.url, p.sortKey, p.state])).toEqual([
      ["https://images.example.com/a.jpg", 1, "pending"],
      ["https://images.example.com/b.jpg", 5, "pending"],
    ]);
    expect(l.statusHistory).toEqual([{ from: null, to: "FOR_SALE", changedAt: expect.any(String) }]);
    expect(Date.parse(l.createdAt)).toBeLessThanOrEqual(Date.parse(l.updatedAt));
  });

  test("a status-only update (the spec's sample) changes the status and records the transition", async () => {
    const id = newId();
    await partner.put(`/partner/v1/listings/${id}`, sample.listing(brokerId));
    const res = await partner.put(`/partner/v1/listings/${id}`, { status: "UNDER_CONTRACT" });
    expect(res.status).toBe(200);
    await partner.put(`/partner/v1/listings/${id}`, { status: "SOLD" });
    const { body } = await partner.get(`/partner/v1/listings/${id}`);
    expect(body.listing.status).toBe("SOLD");
    expect(body.listing.businessType).toBe("Restaurant");
    expect(body.listing.statusHistory.map((h: any) => [h.from, h.to])).toEqual([
      [null, "FOR_SALE"],
      ["FOR_SALE", "UNDER_CONTRACT"],
      ["UNDER_CONTRACT", "SOLD"],
    ]);
  });

  test("any status can move to any status, including back from SOLD to DRAFT", async () => {
    const id = newId();
    await partner.put(`/partner/v1/listings/${id}`, sample.listing(brokerId, { status: "SOLD" }));
    for (const status of ["DRAFT", "ARCHIVED", "REVIEWING_OFFERS", "PENDING_CONTRACT", "FOR_SALE"]) {
      expect((await partner.put(`/partner/v1/listings/${id}`, { status })).status).toBe(200);
      expect((await partner.get(`/partner/v1/listings/${id}`)).body.listing.status).toBe(status);
    }
  });
});

describe("update semantics", () => {
  test("nested objects merge field by field; omitted top-level fields keep their values", async () => {
    const id = newId();
    await partner.put(`/partner/v1/listings/${id}`, sample.listing(brokerId));
    await partner.put(`/partner/v1/listings/${id}`, {
      financials: { revenue: 1_000_000 },
      property: { rentData: { amount: 7000 } },
      location: { city: "Round Rock" },
    });
    const l = (await partner.get(`/partner/v1/listings/${id}`)).body.listing;
    expect(l.financials).toEqual({ askingPrice: 450000, revenue: 1_000_000, sde: 180000 });
    expect(l.property).toEqual({
      propertyKind: "RENTED",
      areaSqft: 2400,
      rentData: { amount: 7000, frequency: "MONTHLY", leaseRenewable: true },
    });
    expect(l.location).toEqual({ ...sample.listing(brokerId).location, city: "Round Rock" });
    expect(l.title).toBe(sample.listing(brokerId).title);
    expect(l.photos).toHaveLength(2);
  });

  test("photos replace the whole list; a photo that stays keeps its processing state", async () => {
    const id = newId();
    const { body } = await partner.put(`/partner/v1/listings/${id}`, sample.listing(brokerId));
    await api.sql`UPDATE listing_photos SET state = 'ready', width = 1600, height = 1200 WHERE listing_id = ${body.serviceListingId} AND url = 'https://images.example.com/front.jpg'`;
    await partner.put(`/partner/v1/listings/${id}`, {
      photos: [
        { url: "https://images.example.com/front.jpg", sortKey: 3 },
        { url: "https://images.example.com/patio.jpg", sortKey: 1 },
      ],
    });
    const photos = (await partner.get(`/partner/v1/listings/${id}`)).body.listing.photos;
    expect(photos.map((p: any) => [p.url, p.sortKey, p.state])).toEqual([
      ["https://images.example.com/patio.jpg", 1, "pending"],
      ["https://images.example.com/front.jpg", 3, "ready"],
    ]);
  });

  test("explicit null clears an optional field (JSON Merge Patch); an emptied object or list reads back empty", async () => {
    const id = newId();
    await partner.put(`/partner/v1/listings/${id}`, sample.listing(brokerId));
    const res = await partner.put(`/partner/v1/listings/${id}`, {
      title: null,
      financials: { sde: null },
      financing: null,
      photos: null,
      location: { streetAddress1: null },
      property: { rentData: null },
    });
    expect(res.status).toBe(200);
    const l = (await partner.get(`/partner/v1/listings/${id}`)).body.listing;
    expect(l.title).toBeNull();
    expect(l.financials).toEqual({ askingPrice: 450000, revenue: 900000 });
    expect(l.financing).toEqual({});
    expect(l.photos).toEqual([]);
    expect(l.location.streetAddress1).toBeNull();
    expect(l.property).toEqual({ propertyKind: "RENTED", areaSqft: 2400 });
  });

  test("null on a required field is refused and changes nothing", async () => {
    const id = newId();
    const { body } = await partner.put(`/partner/v1/listings/${id}`, sample.listing(brokerId));
    const before = await row(body.serviceListingId);
    for (const patch of [{ status: null }, { businessType: null }, { location: { city: null } }, { location: null }]) {
      const res = await partner.put(`/partner/v1/listings/${id}`, patch);
      expect(res.status).toBe(400);
      expect(res.body.status).toBe("error");
      expect(res.body.error).toMatch(/null/);
    }
    expect((await row(body.serviceListingId)).version).toBe(before.version);
  });

  test("changing brokerExternalId reassigns the listing to that broker", async () => {
    const other = uniqueName("broker");
    const { body: b2 } = await partner.put(
      `/partner/v1/brokers/${other}`,
      sample.broker({ name: "Second Broker", email: "second@example.com" }),
    );
    const id = newId();
    const { body } = await partner.put(`/partner/v1/listings/${id}`, sample.listing(brokerId));
    await partner.put(`/partner/v1/listings/${id}`, { brokerExternalId: other });
    const l = (await partner.get(`/partner/v1/listings/${id}`)).body.listing;
    expect(l.brokerExternalId).toBe(other);
    expect(l.serviceBrokerId).toBe(b2.serviceBrokerId);
    expect((await row(body.serviceListingId)).broker_id).toBe(b2.serviceBrokerId);
  });

  test("the same instant written in another time zone is not a change", async () => {
    const id = newId();
    const { body } = await partner.put(
      `/partner/v1/listings/${id}`,
      sample.listing(brokerId, { establishedAt: "2020-01-01T00:00:00Z" }),
    );
    const before = await row(body.serviceListingId);
    await partner.put(`/partner/v1/listings/${id}`, { establishedAt: "2020-01-01T02:00:00+02:00" });
    expect((await row(body.serviceListingId)).version).toBe(before.version);
  });
});

describe("inline broker", () => {
  test("a listing with an inline broker creates both in one call", async () => {
    const bId = uniqueName("inline-broker");
    const id = newId();
    const { brokerExternalId: _, ...rest } = sample.listing("unused");
    const res = await partner.put(`/partner/v1/listings/${id}`, {
      ...rest,
      broker: { externalBrokerId: bId, ...sample.broker({ name: "Inline Ida" }) },
    });
    expect(res.status).toBe(201);
    const broker = await partner.get(`/partner/v1/brokers/${bId}`);
    expect(broker.status).toBe(200);
    expect(broker.body.broker.name).toBe("Inline Ida");
    expect((await partner.get(`/partner/v1/listings/${id}`)).body.listing.brokerExternalId).toBe(bId);
  });

  test("an inline broker updates the existing broker of that external ID", async () => {
    const bId = uniqueName("inline-broker");
    await partner.put(`/partner/v1/brokers/${bId}`, sample.broker({ name: "Before" }));
    const { brokerExternalId: _, ...rest } = sample.listing("unused");
    await partner.put(`/partner/v1/listings/${newId()}`, {
      ...rest,
      broker: { externalBrokerId: bId, ...sample.broker({ name: "After" }) },
    });
    expect((await partner.get(`/partner/v1/brokers/${bId}`)).body.broker.name).toBe("After");
  });

  test("an invalid inline broker refuses the whole call and writes neither record", async () => {
    const bId = uniqueName("inline-broker");
    const id = newId();
    const { brokerExternalId: _, ...rest } = sample.listing("unused");
    const res = await partner.put(`/partner/v1/listings/${id}`, {
      ...rest,
      broker: { externalBrokerId: bId, ...sample.broker({ email: "not-an-email" }) },
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toContainEqual({ path: "broker.email", message: "must be a valid e-mail address" });
    expect((await partner.get(`/partner/v1/brokers/${bId}`)).status).toBe(404);
    expect(await countListings(id)).toBe(0);
  });

  test("a listing whose create fails after its inline broker was written leaves no broker behind", async () => {
    const bId = uniqueName("inline-broker");
    const id = newId();
    const res = await partner.put(`/partner/v1/listings/${id}`, {
      broker: { externalBrokerId: bId, ...sample.broker() },
      status: "FOR_SALE",
    });
    expect(res.status).toBe(400);
    expect((await partner.get(`/partner/v1/brokers/${bId}`)).status).toBe(404);
  });
});

describe("refusals", () => {
  test("a brokerExternalId that names no broker of this partner → 404 Broker not found, nothing written", async () => {
    const id = newId();
    const res = await partner.put(`/partner/v1/listings/${id}`, sample.listing("no-such-broker"));
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ status: "error", error: "Broker not found" });
    expect(await countListings(id)).toBe(0);
  });

  test("creating without the required fields → 400 naming each, nothing written", async () => {
    const id = newId();
    const res = await partner.put(`/partner/v1/listings/${id}`, {
      title: "Only a title",
      location: { city: "Austin" },
    });
    expect(res.status).toBe(400);
    expect(res.body.details.map((d: any) => d.path)).toEqual([
      "brokerExternalId",
      "status",
      "businessType",
      "location.state",
      "location.country",
      "location.visibility",
    ]);
    expect(res.body.error).toContain("brokerExternalId");
    expect(await countListings(id)).toBe(0);
  });

  test.each([
    [
      { status: "ON_HOLD" },
      "status",
      /must be one of DRAFT, FOR_SALE, REVIEWING_OFFERS, PENDING_CONTRACT, UNDER_CONTRACT, SOLD, ARCHIVED/,
    ],
    [
      { location: { visibility: "EVERYTHING" } },
      "location.visibility",
      /must be one of SHOW_FULL_ADDRESS, SHOW_CITY_STATE, SHOW_STATE_ONLY/,
    ],
    [{ financials: { askingPrice: -1 } }, "financials.askingPrice", /0/],
    [{ financials: { askingprice: 5 } }, "financials.askingprice", /not a known field/],
    [{ photos: [{ url: "https://images.example.com/x.jpg", sortKey: 1.5 }] }, "photos[0].sortKey", /integer/],
    [{ photos: [{ url: "images/x.jpg", sortKey: 1 }] }, "photos[0].url", /absolute http\(s\) URL/],
    [{ establishedAt: "2020-01-01T00:00:00" }, "establishedAt", /ISO 8601/],
    [{ establishedAt: "last spring" }, "establishedAt", /ISO 8601/],
    [{ location: { country: "USA" } }, "location.country", /ISO 3166-1 alpha-2/],
    [{ property: { rentData: { frequency: "DAILY" } } }, "property.rentData.frequency", /MONTHLY/],
    [
      { photos: Array.from({ length: 51 }, (_, i) => ({ url: `https://images.example.com/${i}.jpg`, sortKey: i })) },
      "photos",
      /at most 50/,
    ],
    [
      {
        photos: [
          { url: "https://images.example.com/x.jpg", sortKey: 1 },
          { url: "https://images.example.com/x.jpg", sortKey: 2 },
        ],
      },
      "photos[1].url",
      /repeats photos\[0\]\.url/,
    ],
    [
      { brokerExternalId: "a", broker: { externalBrokerId: "b", name: "B", email: "b@example.com" } },
      "brokerExternalId",
      /differs/,
    ],
  ])("an invalid body is refused with a sentence naming the field: %j", async (patch, path, message) => {
    const id = newId();
    const { body } = await partner.put(`/partner/v1/listings/${id}`, sample.listing(brokerId));
    const before = await row(body.serviceListingId);
    const res = await partner.put(`/partner/v1/listings/${id}`, patch);
    expect(res.status).toBe(400);
    expect(res.body.status).toBe("error");
    expect(res.body.error.startsWith(`${path}: `)).toBe(true);
    expect(res.body.details[0].path).toBe(path);
    expect(res.body.details[0].message).toMatch(message);
    expect((await row(body.serviceListingId)).version).toBe(before.version);
  });

  test("external IDs outside the rules are refused with the rule", async () => {
    for (const bad of ["x".repeat(129), "%20leading-space", "tab%09inside", "trailing%20"]) {
      const res = await partner.put(`/partner/v1/listings/${bad}`, sample.listing(brokerId));
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(
        "externalListingId must be 1-128 characters with no control characters and no leading or trailing whitespace",
      );
    }
    expect(
      (
        await partner.put(
          `/partner/v1/listings/${"y".repeat(128)}-${Date.now()}`.slice(0, 148),
          sample.listing(brokerId),
        )
      ).status,
    ).toBe(201);
  });
});

describe("idempotency and concurrency", () => {
  test("an identical repeat returns 200 with the same IDs and changes nothing: no write, no updatedAt change, no event", async () => {
    const id = newId();
    const body = sample.listing(brokerId);
    const created = await partner.put(`/partner/v1/listings/${id}`, body);
    const changed = await partner.put(`/partner/v1/listings/${id}`, { ...body, title: "Changed once" });
    const before = await row(created.body.serviceListingId);
    for (let i = 0; i < 3; i++) {
      const repeat = await partner.put(`/partner/v1/listings/${id}`, { ...body, title: "Changed once" });
      expect(repeat.status).toBe(200);
      expect(repeat.body).toEqual(changed.body);
    }
    const after = await row(created.body.serviceListingId);
    expect(after.version).toBe(before.version);
    expect(after.updated_at).toEqual(before.updated_at);

    const aggregateId = String(created.body.serviceListingId);
    await waitForOutboxDrained(api.sql, aggregateId);
    const events = await eventsOnTopic(api.kafka, api.sql, Topics.listingEvents.name, aggregateId);
    expect(events.map((e) => [e.type, e.version, e.payload.title])).toEqual([
      ["listing.upserted", 1, body.title],
      ["listing.upserted", 2, "Changed once"],
    ]);
    expect(events[0]!.partnerId).toBe(partner.partnerId);
  });

  test("concurrent PUTs of the same new external ID create exactly one listing: one 201, the rest 200", async () => {
    const id = newId();
    const results = await Promise.all(
      Array.from({ length: 12 }, () => partner.put(`/partner/v1/listings/${id}`, sample.listing(brokerId))),
    );
    expect(results.map((r) => r.status).sort()).toEqual([...Array(11).fill(200), 201]);
    expect(new Set(results.map((r) => r.body.serviceListingId)).size).toBe(1);
    expect(await countListings(id)).toBe(1);
  });
});

describe("partner isolation", () => {
  test("another partner's external IDs are simply not found, and the same ID names a separate record", async () => {
    const other = await api.createPartner();
    const id = newId();
    const mine = await partner.put(`/partner/v1/listings/${id}`, sample.listing(brokerId));
    expect(await other.get(`/partner/v1/listings/${id}`)).toMatchObject({
      status: 404,
      body: { status: "error", error: "Listing not found" },
    });
    expect((await other.put(`/partner/v1/listings/${newId()}`, sample.listing(brokerId))).body).toEqual({
      status: "error",
      error: "Broker not found",
    });

    await other.put(`/partner/v1/brokers/${brokerId}`, sample.broker({ name: "Other partner's broker" }));
    const theirs = await other.put(`/partner/v1/listings/${id}`, sample.listing(brokerId, { title: "Theirs" }));
    expect(theirs.status).toBe(201);
    expect(theirs.body.serviceListingId).not.toBe(mine.body.serviceListingId);
    expect((await partner.get(`/partner/v1/listings/${id}`)).body.listing.title).toBe(sample.listing(brokerId).title);
  });
});

describe("GET /partner/v1/listings (reconciliation)", () => {
  test("pages through every listing exactly once in a stable order, and filters by updatedSince", async () => {
    const p = await api.createPartner();
    const b = uniqueName("broker");
    await p.put(`/partner/v1/brokers/${b}`, sample.broker());
    const ids = Array.from({ length: 5 }, () => newId());
    for (const id of ids) await p.put(`/partner/v1/listings/${id}`, sample.listing(b));
    // Pages of two, to the end: a page may stop early (and come back) while a transaction runs on the server.
    const seen = (await allRecords((path) => p.get(path), `/partner/v1/listings?limit=2`)).map(
      (r: any) => r.externalListingId,
    );
    expect(seen.sort()).toEqual([...ids].sort());

    const all = await allRecords((path) => p.get(path), `/partner/v1/listings?limit=500`);
    const since = all[2].updatedAt;
    const recent = await allRecords(
      (path) => p.get(path),
      `/partner/v1/listings?updatedSince=${encodeURIComponent(since)}`,
    );
    expect(recent.map((r: any) => r.externalListingId)).toEqual(all.slice(2).map((r: any) => r.externalListingId));
    expect((await p.get(`/partner/v1/listings?cursor=garbage`)).status).toBe(400);
  });
});
