// The SDK's calls beyond records (webhooks, deliveries, history, test mode, the feed iterator) against the real
// API (in-process, real PostgreSQL and Redis): each returns the success body or throws PssApiError, never
// `{ data, error }`.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createFeedSequencer, silentLogger, type FeedSequencer } from "@pss/service-kit";
import { startApi, sample, type ApiHarness, type Partner } from "../../../services/api/test/support/harness.ts";
import { uniqueName } from "../../../test/support/env.ts";
import { createPartnerClient, PssApiError, type FeedEvent, type PartnerClient } from "../src/index.ts";

let api: ApiHarness;
let partner: Partner;
let client: PartnerClient;
let sequencer: FeedSequencer;

beforeAll(async () => {
  api = await startApi({ relay: false });
  partner = await api.createPartner({ leadTracking: true, test: true });
  client = createPartnerClient({ baseUrl: api.baseUrl, apiKey: partner.apiKey });
  sequencer = createFeedSequencer({ sql: api.sql, logger: silentLogger }, { retentionDays: 35, idlePollMs: 20 });
  sequencer.start();
});
afterAll(async () => {
  await sequencer?.stop();
  await api?.stop();
});

async function apiError(call: Promise<unknown>): Promise<PssApiError> {
  const err = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PssApiError);
  return err as PssApiError;
}

describe("webhooks", () => {
  test("an endpoint is created with its secret once, read, listed, updated, rotated, pinged and deleted", async () => {
    const id = uniqueName("sdk-hook");
    const created = await client.webhooks.put(id, {
      url: "https://crm.example.com/hooks/pss",
      events: ["listing.published", "lead.received"],
    });
    expect(created).toMatchObject({ created: true, httpStatus: 201, secret: expect.stringMatching(/^whsec_/) });
    expect(await client.webhooks.get(id)).toMatchObject({ endpointId: id, enabled: true });
    const listed: string[] = [];
    for await (const endpoint of client.webhooks.list({ limit: 1 })) listed.push(endpoint.endpointId);
    expect(listed).toContain(id);

    const updated = await client.webhooks.put(id, { description: "CRM" });
    expect(updated).toMatchObject({ created: false, httpStatus: 200 });
    expect("secret" in updated).toBe(false);
    const rotated = await client.webhooks.rotateSecret(id);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe((created as { secret?: string }).secret);

    const ping = await client.webhooks.test(id);
    expect(ping).toMatchObject({ httpStatus: 202, deliveryId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const deliveries = [];
    for await (const d of client.webhooks.deliveries.list({ endpointId: id })) deliveries.push(d);
    expect(deliveries.map((d) => d.deliveryId)).toEqual([(ping as { deliveryId: string }).deliveryId]);

    // Nothing of it has failed, and the live feed holds none of its event types: nothing to queue.
    expect(await client.webhooks.recover(id, new Date(Date.now() - 3600_000))).toMatchObject({
      httpStatus: 202,
      requeued: 0,
      notQueued: 0,
    });
    expect(await client.webhooks.replay(id, { afterSequence: 0 })).toMatchObject({ httpStatus: 202, queued: 0 });

    const unknown = await apiError(client.webhooks.deliveries.retry(crypto.randomUUID()));
    expect(unknown.status).toBe(404);
    await client.webhooks.delete(id);
    expect((await apiError(client.webhooks.get(id))).status).toBe(404);
  });

  test("replay queues the feed's events the endpoint subscribes to, each once", async () => {
    // A test key: its simulated lead puts a lead.received in the test feed.
    const { testClient, listingId } = await testListingWithLead();
    const lead = await waitForFeedEvent(testClient, "lead.received", listingId);
    const id = uniqueName("sdk-replay");
    await testClient.webhooks.put(id, { url: "https://crm.example.com/hooks/pss", events: ["lead.received"] });
    const range = { afterSequence: lead.sequence - 1, throughSequence: lead.sequence };
    expect(await testClient.webhooks.replay(id, range)).toMatchObject({ httpStatus: 202, queued: 1 });
    const queued = [];
    for await (const d of testClient.webhooks.deliveries.list({ endpointId: id })) queued.push(d);
    expect(queued).toMatchObject([
      { eventType: "lead.received", status: "pending", payload: { data: { sequence: lead.sequence } } },
    ]);
    // Still pending: a repeat queues nothing twice.
    expect(await testClient.webhooks.replay(id, range)).toMatchObject({ httpStatus: 202, queued: 0 });
    await testClient.webhooks.delete(id);
    await testClient.testMode.purge();
  });
});

/** With the partner's test key: a broker, a listing of it, and a simulated lead on the listing (accepted). */
async function testListingWithLead(): Promise<{ testClient: PartnerClient; listingId: string }> {
  const testClient = createPartnerClient({ baseUrl: api.baseUrl, apiKey: partner.test!.apiKey });
  const brokerId = uniqueName("sdk-tb");
  const listingId = uniqueName("sdk-tl");
  await testClient.putBroker(brokerId, sample.broker() as never);
  await testClient.putListing(listingId, sample.listing(brokerId) as never);
  expect((await testClient.testMode.createLead(listingId, { name: "Test Buyer" })).httpStatus).toBe(202);
  return { testClient, listingId };
}

/** The feed's event of `type` about the listing, once the sequencer has numbered it. */
async function waitForFeedEvent(c: PartnerClient, type: string, externalListingId: string): Promise<FeedEvent> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const page = await c.events.page({ after: "0", limit: 500 });
    const found = page.results.find(
      (e) => e.type === type && (e.data as { externalListingId?: string }).externalListingId === externalListingId,
    );
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${type} in the feed`);
    await Bun.sleep(50);
  }
}

describe("history, test mode and the change feed", () => {
  test("a listing's history pages newest first through every version", async () => {
    const brokerId = uniqueName("sdk-hb");
    const listingId = uniqueName("sdk-hl");
    await client.putBroker(brokerId, sample.broker() as never);
    await client.putListing(listingId, sample.listing(brokerId) as never);
    await client.putListing(listingId, { status: "SOLD" });
    await client.putListing(listingId, { status: "ARCHIVED" });
    const versions: number[] = [];
    for await (const entry of client.listingHistory(listingId, { limit: 1 })) versions.push(entry.version);
    expect(versions).toEqual([3, 2, 1]);
    const brokerVersions = [];
    for await (const entry of client.brokerHistory(brokerId)) brokerVersions.push(entry.version);
    expect(brokerVersions).toEqual([1]);
  });

  test("with a test key, a simulated lead is accepted and purge removes the test records", async () => {
    const { testClient, listingId } = await testListingWithLead();
    const purged = await testClient.testMode.purge();
    expect(purged.deleted).toMatchObject({ listings: 1, brokers: 1, leads: 1 });
    expect((await apiError(testClient.getListing(listingId))).status).toBe(404);
    // A live key cannot simulate leads.
    expect((await apiError(client.testMode.createLead(listingId))).status).toBeGreaterThanOrEqual(400);
  });

  test("events.follow yields every change in sequence order, then waits for new ones until aborted", async () => {
    // A partner of its own: its feed holds exactly this test's changes (other tests' events may still be numbered).
    const own = createPartnerClient({ baseUrl: api.baseUrl, apiKey: (await api.createPartner()).apiKey });
    const after = 0;
    const brokerId = uniqueName("sdk-fb");
    await own.putBroker(brokerId, sample.broker() as never);
    await own.putBroker(brokerId, { ...(sample.broker() as object), name: "Renamed Broker" } as never);
    const abort = new AbortController();
    const seen: FeedEvent[] = [];
    const deadline = setTimeout(() => abort.abort(), 10_000);
    for await (const event of own.events.follow({ after, pollMs: 50, signal: abort.signal })) {
      seen.push(event);
      if (seen.length === 2) abort.abort();
    }
    clearTimeout(deadline);
    expect(seen.map((e) => e.version)).toEqual([1, 2]);
    expect(seen[1]!.sequence).toBe(seen[0]!.sequence + 1);
  });
});
