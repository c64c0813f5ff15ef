// Test mode (docs/sandbox.md) and webhooks, end to end on the real servers: an endpoint created with a test key
// (pss_test_…) hears only of the partner's test records, one created with the live key only of live records;
// each key sees and manages only its own mode's endpoints and deliveries (the same endpointId names one endpoint
// per mode). The API, its relay, the indexer, media and webhooks services are real and in-process; the receiver
// is real, on loopback; every request is verified with standardwebhooks.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { call, sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import { deleteSearchIndex, startIndexer, type IndexerHarness } from "../../indexer/test/support/indexer-harness.ts";
import { startImageServer, type ImageServer } from "../../media/test/support/image-server.ts";
import { startMedia, type MediaHarness } from "../../media/test/support/media-harness.ts";
import { uniqueName } from "../../../test/support/env.ts";
import { startReceiver, verified, type Receiver } from "./support/receiver.ts";
import { startWebhooks, until, type WebhooksHarness } from "./support/webhooks-harness.ts";

let api: ApiHarness;
let receiver: Receiver;
let images: ImageServer;
let indexer: IndexerHarness;
let media: MediaHarness;
let webhooks: WebhooksHarness;
let partner: Partner;
let testKey = "";
const partners = new Set<string>();
// One endpointId, two endpoints: the live key's and the test key's.
const endpointId = uniqueName("crm");
const ALL = [
  "listing.published",
  "listing.unpublished",
  "listing.media.processed",
  "broker.avatar.processed",
  "lead.received",
];
const secrets = { live: "", test: "" };

beforeAll(async () => {
  receiver = startReceiver();
  images = await startImageServer();
  api = await startApi();
  partner = await api.createPartner({ leadTracking: true, test: true });
  testKey = partner.test!.apiKey;
  partners.add(partner.partnerId);
  [indexer, media, webhooks] = await Promise.all([
    startIndexer({ onlyPartners: partners }),
    startMedia({ partners, env: { MEDIA_ALLOWED_HOSTS: `127.0.0.1:${images.port}` } }),
    startWebhooks({ allowedHosts: [receiver.hostPort], publicBaseUrl: api.marketplaceUrl, partners }),
  ]);
  for (const mode of ["live", "test"] as const) {
    const res = await call(api.baseUrl, "PUT", `/partner/v1/webhook-endpoints/${endpointId}`, {
      key: mode === "live" ? partner.apiKey : testKey,
      body: { url: receiver.url(`/${mode}`), events: ALL },
    });
    expect([mode, res.status]).toEqual([mode, 201]);
    secrets[mode] = res.body.secret;
  }
}, 120_000);

afterAll(async () => {
  await Promise.allSettled([webhooks?.stop(), media?.stop(), indexer?.stop()]);
  if (indexer) await deleteSearchIndex(indexer.alias);
  images?.stop();
  receiver?.stop();
  if (api) {
    await api.sql`DELETE FROM webhook_endpoints WHERE partner_id = ${partner.partnerId}::uuid`;
    await api.stop();
  }
}, 60_000);

const received = (mode: "live" | "test") => receiver.requests(`/${mode}`).map((r) => verified(r, secrets[mode]));
const eventually = (mode: "live" | "test", type: string, match: (d: Record<string, any>) => boolean) =>
  until(
    `${type} at the ${mode} endpoint`,
    () => received(mode).find((e) => e.type === type && match(e.data)) ?? null,
    60_000,
  );

test("each key manages only its own mode's endpoint of the same ID", async () => {
  const live = await call(api.baseUrl, "GET", "/partner/v1/webhook-endpoints", { key: partner.apiKey });
  const test = await call(api.baseUrl, "GET", "/partner/v1/webhook-endpoints", { key: testKey });
  expect(live.body.results.map((e: { url: string }) => e.url)).toEqual([receiver.url("/live")]);
  expect(test.body.results.map((e: { url: string }) => e.url)).toEqual([receiver.url("/test")]);
  const pinged = await call(api.baseUrl, "POST", `/partner/v1/webhook-endpoints/${endpointId}/test`, { key: testKey });
  expect(pinged.status).toBe(202);
  await eventually("test", "ping", () => true);
  // The live key does not see the test key's delivery, nor could it retry it.
  const liveDeliveries = await call(api.baseUrl, "GET", "/partner/v1/webhook-deliveries", { key: partner.apiKey });
  expect(liveDeliveries.body.results.map((d: { deliveryId: string }) => d.deliveryId)).not.toContain(
    pinged.body.deliveryId,
  );
  expect(
    (
      await call(api.baseUrl, "POST", `/partner/v1/webhook-deliveries/${pinged.body.deliveryId}/retry`, {
        key: partner.apiKey,
      })
    ).status,
  ).toBe(404);
  expect(received("live").filter((e) => e.type === "ping")).toEqual([]);
});

test("test records' events reach only the test key's endpoint, live records' only the live one", async () => {
  // Test mode: a broker with an avatar, a listing with a photo, a simulated lead, then sold.
  const testBroker = uniqueName("broker");
  expect(
    (
      await call(api.baseUrl, "PUT", `/partner/v1/brokers/${testBroker}`, {
        key: testKey,
        body: sample.broker({ avatarUrl: images.url("/avatar.jpg") }),
      })
    ).status,
  ).toBe(201);
  const testListing = uniqueName("listing");
  const created = await call(api.baseUrl, "PUT", `/partner/v1/listings/${testListing}`, {
    key: testKey,
    body: sample.listing(testBroker, { photos: [{ url: images.url("/photo.jpg"), sortKey: 1 }] }),
  });
  expect(created.status).toBe(201);
  // Live mode: a listing of its own.
  const liveBroker = uniqueName("broker");
  expect((await partner.put(`/partner/v1/brokers/${liveBroker}`, sample.broker())).status).toBe(201);
  const liveListing = uniqueName("listing");
  expect(
    (await partner.put(`/partner/v1/listings/${liveListing}`, sample.listing(liveBroker, { photos: [] }))).status,
  ).toBe(201);

  const ofTest = (d: Record<string, any>) => d.externalListingId === testListing;
  await eventually("test", "broker.avatar.processed", (d) => d.externalBrokerId === testBroker);
  await eventually("test", "listing.media.processed", ofTest);
  const published = await eventually("test", "listing.published", ofTest);
  expect(published.data).toMatchObject({
    externalListingId: testListing,
    externalBrokerId: testBroker,
    status: "FOR_SALE",
  });
  // A test listing has no public page: its URL is its preview, which opens with the partner's test key.
  const previewUrl = `${api.marketplaceUrl}/preview/listings/${created.body.serviceListingId}`;
  expect(published.data.serviceListingUrl).toBe(previewUrl);
  expect((await fetch(previewUrl, { headers: { authorization: `Bearer ${testKey}` } })).status).toBe(200);
  expect((await fetch(`${api.marketplaceUrl}/listings/${created.body.serviceListingId}`)).status).toBe(404);
  await eventually("live", "listing.published", (d) => d.externalListingId === liveListing);

  const lead = await call(api.baseUrl, "POST", `/partner/v1/test/listings/${testListing}/leads`, {
    key: testKey,
    body: {},
  });
  expect(lead.status).toBe(202);
  const leadReceived = await eventually("test", "lead.received", ofTest);
  // The office's test leads (only this one: a new partner's office); live counts never include it.
  expect(leadReceived.data).toMatchObject({ officeId: partner.officeId, officeLeadCount: 1, version: 1 });

  expect(
    (await call(api.baseUrl, "PUT", `/partner/v1/listings/${testListing}`, { key: testKey, body: { status: "SOLD" } }))
      .status,
  ).toBe(200);
  await eventually("test", "listing.unpublished", ofTest);

  // Nothing crossed over: every delivery of each endpoint is about its own mode's records.
  const named = (e: { data: Record<string, any> }) =>
    e.data.externalListingId ?? e.data.externalBrokerId ?? e.data.endpointId;
  expect(received("live").map(named)).not.toContain(testListing);
  expect(received("live").map(named)).not.toContain(testBroker);
  expect(received("test").map(named)).not.toContain(liveListing);
  const liveList = await call(api.baseUrl, "GET", `/partner/v1/webhook-deliveries?endpointId=${endpointId}`, {
    key: partner.apiKey,
  });
  const testList = await call(api.baseUrl, "GET", `/partner/v1/webhook-deliveries?endpointId=${endpointId}`, {
    key: testKey,
  });
  const about = (d: { payload: { data: Record<string, any> } }) => named(d.payload);
  expect(liveList.body.results.map(about)).toEqual([liveListing]);
  expect(new Set(testList.body.results.map(about))).toEqual(new Set([testListing, testBroker, endpointId]));
}, 120_000);
