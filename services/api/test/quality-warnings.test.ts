// Quality warnings and the quality score (issue 24, part 1) through the real API: never blocking, on every PUT
// answer (dry runs too) and on the read-back, computed from the record as it stands (photos once processed).
// The media service is not running here: a photo's or avatar's processing is written as the media service writes it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { WARNING_CODES } from "@pss/contracts";
import { uniqueName } from "../../../test/support/env.ts";
import { call, sample, startApi, type ApiHarness, type Partner } from "./support/harness.ts";
import { allRecords } from "./support/record-pages.ts";

let api: ApiHarness;
let partner: Partner;
let phoneless: string;

beforeAll(async () => {
  api = await startApi({ relay: false });
  partner = await api.createPartner();
  phoneless = uniqueName("broker");
  expect((await partner.put(`/partner/v1/brokers/${phoneless}`, sample.broker({ phone: undefined }))).status).toBe(201);
});
afterAll(() => api.stop());

const codes = (body: { warnings: { code: string }[] }) => body.warnings.map((w) => w.code).sort();
const photos = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ url: `https://images.example.com/q${i}.jpg`, sortKey: i }));
const longDescription =
  "A well-established taqueria two blocks from the Capitol, with trained staff, a loyal lunch crowd and a lease that runs until 2030.";

async function processPhoto(listingId: number, url: string, width: number) {
  await api.sql`UPDATE listing_photos SET state = 'ready', width = ${width}, height = ${Math.round(width * 0.75)} WHERE listing_id = ${listingId} AND url = ${url}`;
}

describe("listing warnings", () => {
  test("a thin listing is written (201) and told what a buyer would miss; the read-back carries the same", async () => {
    const id = uniqueName("listing");
    const body = sample.listing(phoneless, {
      status: "UNDER_CONTRACT",
      description: "Nice.",
      financials: { revenue: 900000 },
      location: { city: "Austin", state: "TX", postalCode: "SW1A 1AA", country: "US", visibility: "SHOW_CITY_STATE" },
      photos: photos(2),
    });
    const put = await partner.put(`/partner/v1/listings/${id}`, body);
    expect(put.status).toBe(201);
    expect(put.body.warnings).toEqual([
      {
        path: "description",
        code: "DESCRIPTION_TOO_SHORT",
        message: "Description is 5 characters; at least 100 tell a buyer what the business is",
      },
      {
        path: "location.postalCode",
        code: "POSTAL_CODE_MISMATCH",
        message: "SW1A 1AA is not a postal code of US: check the code and the country",
      },
      { path: "financials.askingPrice", code: "ASKING_PRICE_MISSING", message: expect.stringContaining("askingPrice") },
      { path: "photos", code: "PHOTOS_TOO_FEW", message: "2 photos; listings with at least 5 get more inquiries" },
      { path: "broker.phone", code: "BROKER_PHONE_MISSING", message: expect.stringContaining("UNDER_CONTRACT") },
    ]);
    expect(put.body.qualityScore).toBe(100 - 10 - 5 - 15 - 18 - 10);
    for (const w of put.body.warnings) expect(WARNING_CODES).toContain(w.code);

    const got = await partner.get(`/partner/v1/listings/${id}`);
    expect(got.status).toBe(200);
    expect({ warnings: got.body.listing.warnings, qualityScore: got.body.listing.qualityScore }).toEqual({
      warnings: put.body.warnings,
      qualityScore: put.body.qualityScore,
    });
    const listed = await allRecords((path) => partner.get(path), `/partner/v1/listings?limit=500`);
    expect(listed.find((l: { externalListingId: string }) => l.externalListingId === id).warnings).toEqual(
      put.body.warnings,
    );
  });

  test("a complete listing has no warnings and scores 100", async () => {
    const id = uniqueName("listing");
    const put = await partner.put(
      `/partner/v1/listings/${id}`,
      sample.listing(phoneless, { description: longDescription, photos: photos(5) }),
    );
    expect(put.status).toBe(201);
    expect(put.body).toMatchObject({ warnings: [], qualityScore: 100 });
  });

  test("a photo narrower than 1,200 px is warned about once processed; a failed one says why; the answers follow the stored state", async () => {
    const id = uniqueName("listing");
    const body = sample.listing(phoneless, { description: longDescription, photos: photos(5) });
    const created = await partner.put(`/partner/v1/listings/${id}`, body);
    expect(created.body.warnings).toEqual([]);
    const listingId = created.body.serviceListingId as number;
    await processPhoto(listingId, "https://images.example.com/q0.jpg", 1600);
    await processPhoto(listingId, "https://images.example.com/q1.jpg", 800);
    await api.sql`UPDATE listing_photos SET state = 'failed', failure_reason = 'HTTP 404 from the image host' WHERE listing_id = ${listingId} AND url = 'https://images.example.com/q2.jpg'`;

    const got = (await partner.get(`/partner/v1/listings/${id}`)).body.listing;
    expect(got.warnings).toEqual([
      {
        path: "photos[1]",
        code: "PHOTO_TOO_NARROW",
        message: "Image is 800 px wide; send one at least 1200 px wide so it stays sharp on large screens",
      },
      { path: "photos[2]", code: "PHOTO_FAILED", message: expect.stringContaining("HTTP 404 from the image host") },
    ]);
    expect(got.qualityScore).toBe(91);

    // An identical repeat, its dry run, and a dry run that replaces the narrow photo all see the processing.
    const again = await partner.put(`/partner/v1/listings/${id}`, body);
    expect(again.body).toMatchObject({ message: "Listing updated", warnings: got.warnings, qualityScore: 91 });
    const dry = await call(api.baseUrl, "PUT", `/partner/v1/listings/${id}?dryRun=true`, { key: partner.apiKey, body });
    expect(dry.body).toMatchObject({ outcome: "noChange", warnings: got.warnings, qualityScore: 91 });
    const replaced = {
      photos: [...photos(5).filter((p) => p.sortKey !== 1), { url: "https://images.example.com/new.jpg", sortKey: 1 }],
    };
    const dryReplace = await call(api.baseUrl, "PUT", `/partner/v1/listings/${id}?dryRun=true`, {
      key: partner.apiKey,
      body: replaced,
    });
    expect(dryReplace.body.outcome).toBe("wouldUpdate");
    expect(codes(dryReplace.body)).toEqual(["PHOTO_FAILED"]);
  });

  test("warnings never block, and a refused body gets its 400 without warnings", async () => {
    const res = await partner.put(`/partner/v1/listings/${uniqueName("listing")}`, { status: "FOR_SALE" });
    expect(res.status).toBe(400);
    expect(res.body.status).toBe("error");
    expect(res.body.warnings).toBeUndefined();
  });

  test("giving the broker a phone clears BROKER_PHONE_MISSING from an UNDER_CONTRACT listing's dry run and read-back", async () => {
    const brokerId = uniqueName("broker");
    await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker({ phone: undefined }));
    const id = uniqueName("listing");
    const body = sample.listing(brokerId, {
      status: "UNDER_CONTRACT",
      description: longDescription,
      photos: photos(5),
    });
    expect(codes((await partner.put(`/partner/v1/listings/${id}`, body)).body)).toEqual(["BROKER_PHONE_MISSING"]);
    const inline = { ...body, brokerExternalId: undefined, broker: { externalBrokerId: brokerId, ...sample.broker() } };
    const dry = await call(api.baseUrl, "PUT", `/partner/v1/listings/${id}?dryRun=true`, {
      key: partner.apiKey,
      body: inline,
    });
    expect(dry.body).toMatchObject({
      outcome: "wouldUpdate",
      changedPaths: ["broker.phone"],
      warnings: [],
      qualityScore: 100,
    });
    await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker());
    expect((await partner.get(`/partner/v1/listings/${id}`)).body.listing.warnings).toEqual([]);
  });
});

describe("broker warnings", () => {
  test("an avatar under 400x400 once processed is warned about on the read-back and on the next PUT", async () => {
    const brokerId = uniqueName("broker");
    const body = sample.broker({ avatarUrl: "https://images.example.com/jane.jpg" });
    const put = await partner.put(`/partner/v1/brokers/${brokerId}`, body);
    expect(put.status).toBe(201);
    expect(put.body).toMatchObject({ warnings: [], qualityScore: 100 });
    await api.sql`UPDATE brokers SET avatar_state = 'ready', avatar_width = 300, avatar_height = 300 WHERE id = ${put.body.serviceBrokerId}`;
    const expected = [
      { path: "avatarUrl", code: "AVATAR_TOO_SMALL", message: "Image is 300x300 px; send one at least 400x400 px" },
    ];
    expect((await partner.get(`/partner/v1/brokers/${brokerId}`)).body.broker).toMatchObject({
      warnings: expected,
      qualityScore: 85,
    });
    expect((await partner.put(`/partner/v1/brokers/${brokerId}`, body)).body).toMatchObject({
      warnings: expected,
      qualityScore: 85,
    });
    // A dry run with another avatar URL: the new image is not processed yet, so nothing to warn about.
    const dry = await call(api.baseUrl, "PUT", `/partner/v1/brokers/${brokerId}?dryRun=true`, {
      key: partner.apiKey,
      body: { ...body, avatarUrl: "https://images.example.com/jane-big.jpg" },
    });
    expect(dry.body).toMatchObject({ outcome: "wouldUpdate", warnings: [], qualityScore: 100 });
  });

  test("a broker with only a name and an e-mail is told what a buyer would miss", async () => {
    const put = await partner.put(`/partner/v1/brokers/${uniqueName("broker")}`, {
      name: "Sam Seller",
      email: "sam@example.com",
    });
    expect(put.status).toBe(201);
    expect(codes(put.body)).toEqual(["AVATAR_MISSING", "BIO_MISSING", "BROKER_PHONE_MISSING", "LICENSE_MISSING"]);
    expect(put.body.qualityScore).toBe(0);
  });
});
