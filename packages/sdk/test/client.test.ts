// The SDK client against the real API (in-process, real PostgreSQL and Redis).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startApi, sample, type ApiHarness, type Partner } from "../../../services/api/test/support/harness.ts";
import {
  createPartnerClient,
  createRecordValidator,
  PssApiError,
  PssNetworkError,
  type PartnerClient,
} from "../src/index.ts";
import { freePort } from "./support/api-process.ts";

let api: ApiHarness;
let partner: Partner;
let client: PartnerClient;

beforeAll(async () => {
  api = await startApi({ relay: false });
  partner = await api.createPartner();
  client = createPartnerClient({ baseUrl: api.baseUrl, apiKey: partner.apiKey });
});
afterAll(() => api.stop());

describe("createPartnerClient", () => {
  test("PUT creates (201) then updates (200), and the record reads back as stored", async () => {
    const broker = await client.putBroker("sdk-b1", sample.broker() as never);
    expect(broker).toMatchObject({
      status: "success",
      message: "Broker created",
      created: true,
      httpStatus: 201,
      serviceBrokerId: expect.any(String),
      requestId: expect.any(String),
    });
    const listing = await client.putListing("sdk-l1", sample.listing("sdk-b1") as never);
    expect(listing).toMatchObject({
      created: true,
      httpStatus: 201,
      serviceListingId: expect.any(Number),
      serviceListingUrl: expect.stringContaining(`/listings/${listing.serviceListingId}`),
    });
    const updated = await client.putListing("sdk-l1", { status: "SOLD" });
    expect(updated).toMatchObject({
      created: false,
      httpStatus: 200,
      message: "Listing updated",
      serviceListingId: listing.serviceListingId,
    });
    const back = await client.getListing("sdk-l1");
    expect(back).toMatchObject({ externalListingId: "sdk-l1", status: "SOLD", brokerExternalId: "sdk-b1" });
    expect((await client.getBroker("sdk-b1")).name).toBe("Jane Broker");
    expect((await client.health()).status).toBe("success");
  });

  test("an external ID with spaces, slashes and non-ASCII characters goes into the path safely", async () => {
    const id = "Büro 12/7 #a?b";
    await client.putBroker(id, sample.broker() as never);
    expect((await client.getBroker(id)).externalBrokerId).toBe(id);
  });

  test("listing pages are followed to the end", async () => {
    const other = await api.createPartner();
    const c = createPartnerClient({ baseUrl: api.baseUrl, apiKey: other.apiKey });
    await c.putBroker("b", sample.broker() as never);
    for (let i = 0; i < 7; i++) await c.putListing(`page-${i}`, sample.listing("b") as never);
    const ids: string[] = [];
    for await (const l of c.listListings({ limit: 3 })) ids.push(l.externalListingId);
    expect(ids.sort()).toEqual(Array.from({ length: 7 }, (_, i) => `page-${i}`));
    const brokers: string[] = [];
    for await (const b of c.listBrokers()) brokers.push(b.externalBrokerId);
    expect(brokers).toEqual(["b"]);
  });

  test("error answers become PssApiError with status, the API's sentence, details and the request id", async () => {
    const err = await client.putListing("sdk-bad", { status: "LIVE", title: "x".repeat(201) } as never).catch((e) => e);
    expect(err).toBeInstanceOf(PssApiError);
    expect(err).toMatchObject({
      status: 400,
      error: expect.stringMatching(/^(status|title): /),
      requestId: expect.any(String),
    });
    expect(err.details.map((d: { path: string }) => d.path).sort()).toEqual(["status", "title"]);
    const notFound = await client.getListing("sdk-nothing").catch((e) => e);
    expect(notFound).toMatchObject({ status: 404, error: "Listing not found" });
    const wrongKey = await createPartnerClient({ baseUrl: api.baseUrl, apiKey: "pss_live_wrong" })
      .health()
      .catch((e) => e);
    expect(wrongKey).toMatchObject({ status: 401, error: "Unauthorized" });
  });

  test("the request id a caller sends is the one the API logs and answers with", async () => {
    const r = await client.putBroker("sdk-b2", sample.broker() as never, { requestId: "partner-trace-42" });
    expect(r.requestId).toBe("partner-trace-42");
  });

  test("nothing listening: a PssNetworkError after the configured attempts", async () => {
    const port = await freePort();
    const offline = createPartnerClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: "k",
      retry: { maxAttempts: 3, baseDelayMs: 10 },
    });
    const err = await offline.health().catch((e) => e);
    expect(err).toBeInstanceOf(PssNetworkError);
    expect(err.message).toContain("after 3 attempts");
  });

  test("dry-run says what a PUT would do and stores nothing", async () => {
    const wouldCreate = await client.putListing("sdk-dry", sample.listing("sdk-b1") as never, { dryRun: true });
    expect(wouldCreate).toMatchObject({
      status: "success",
      dryRun: true,
      outcome: "wouldCreate",
      httpStatus: 200,
      requestId: expect.any(String),
    });
    expect(wouldCreate.changedPaths).toEqual(
      expect.arrayContaining(["brokerExternalId", "financials.askingPrice", "photos", "status", "title"]),
    );
    expect(await client.getListing("sdk-dry").catch((e) => e.status)).toBe(404);

    // An existing listing: only the fields that would change, and the stored listing stays as it was.
    const before = await client.getListing("sdk-l1");
    const wouldUpdate = await client.putListing(
      "sdk-l1",
      { financials: { askingPrice: 1 }, status: before.status } as never,
      { dryRun: true },
    );
    expect(wouldUpdate).toMatchObject({
      dryRun: true,
      outcome: "wouldUpdate",
      changedPaths: ["financials.askingPrice"],
    });
    expect(await client.getListing("sdk-l1")).toEqual(before);

    const noChange = await client.putBroker("sdk-b2", sample.broker() as never, { dryRun: true });
    expect(noChange).toMatchObject({ dryRun: true, outcome: "noChange", changedPaths: [] });

    // Refused exactly as the real PUT would be.
    const invalid = await client.putListing("sdk-dry", { status: "LIVE" } as never, { dryRun: true }).catch((e) => e);
    const real = await client.putListing("sdk-dry", { status: "LIVE" } as never).catch((e) => e);
    expect(invalid).toBeInstanceOf(PssApiError);
    expect({ status: invalid.status, error: invalid.error, details: invalid.details }).toEqual({
      status: real.status,
      error: real.error,
      details: real.details,
    });
  });
});

test("local validation names the same fields as the API for the same bad bodies", async () => {
  const validator = createRecordValidator();
  const bodies: [kind: "broker" | "listing", body: Record<string, unknown>][] = [
    ["broker", sample.broker({ serviceAreas: [{ country: "US" }] })],
    ["broker", sample.broker({ licenses: [{}], email: "nope" })],
    // The API checks text (control characters) before the schema and stops there: one problem at a time.
    ["broker", sample.broker({ name: "Jane\u0007" })],
    ["broker", sample.broker({ profile: 5 })],
    ["broker", { email: "a@example.com", colour: "red" }],
    ["listing", { status: "LIVE", financials: { askingPrice: "cheap" } }],
    ["listing", { status: null, location: { country: "usa" } }],
    ["listing", { photos: [{ url: "ftp://x", sortKey: 1.5 }] }],
    [
      "listing",
      {
        photos: [
          { url: "https://i.example.com/1.jpg", sortKey: 1 },
          { url: "https://i.example.com/1.jpg", sortKey: 2 },
        ],
      },
    ],
    ["listing", { establishedAt: "0999-01-01T00:00:00Z", property: { rentData: { frequency: "DAILY" } } }],
    ["listing", { brokerExternalId: "x", broker: { ...sample.broker(), externalBrokerId: "y" } }],
  ];
  for (const [kind, body] of bodies) {
    const local = validator.validateBody(kind, body);
    const res = await partner.put(`/partner/v1/${kind === "broker" ? "brokers" : "listings"}/parity`, body);
    expect(res.status).toBe(400);
    const serverPaths = (res.body.details as { path: string }[]).map((d) => d.path).sort();
    expect([kind, body, local.map((p) => p.path).sort()]).toEqual([kind, body, serverPaths]);
  }
});
