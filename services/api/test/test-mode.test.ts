// Test mode against the real API and PostgreSQL: pss_test_ keys write records kept apart from the partner's live
// records (same external ID = two records; neither mode reads, pages or counts the other's), their URLs are
// signed previews, simulated leads count only for the test key, test-only routes refuse live keys, and test
// records are purged on request or after the retention.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLeaderLease, silentLogger } from "@pss/service-kit";
import { uniqueName } from "../../../test/support/env.ts";
import { createPreviewLinks } from "@pss/http-kit";
import { createRetentionJob, RETENTION_LEASE } from "../src/test-mode/retention-job.ts";
import { call, sample, startApi, type ApiHarness, type Partner, type TestResponse } from "./support/harness.ts";

const BASE = "https://market.example.test";
let api: ApiHarness;
let partner: Partner;
let testKey: string;
let other: Partner;

beforeAll(async () => {
  api = await startApi({ relay: false });
  partner = await api.createPartner({ leadTracking: true, test: true });
  testKey = partner.test!.apiKey;
  other = await api.createPartner({ leadTracking: true, test: true });
});
afterAll(() => api?.stop());

const as = (key: string) => ({
  put: (path: string, body: unknown) => call(api.baseUrl, "PUT", path, { key, body }),
  get: (path: string) => call(api.baseUrl, "GET", path, { key }),
  post: (path: string, body: unknown) => call(api.baseUrl, "POST", path, { key, body }),
  del: (path: string) => call(api.baseUrl, "DELETE", path, { key }),
});
/** A URL the API handed out (under PUBLIC_BASE_URL), fetched from the test server. */
const open = (url: string, headers: Record<string, string> = {}) =>
  fetch(url.replace(BASE, api.marketplaceUrl), { headers });

async function brokerAndListing(key: string, listing: Record<string, unknown> = {}) {
  const brokerId = uniqueName("broker");
  const listingId = uniqueName("listing");
  const b = await as(key).put(`/partner/v1/brokers/${brokerId}`, sample.broker());
  expect(b.status).toBe(201);
  const l = await as(key).put(`/partner/v1/listings/${listingId}`, sample.listing(brokerId, listing));
  expect(l.status).toBe(201);
  return { brokerId, listingId, broker: b.body, listing: l.body };
}

describe("test keys", () => {
  test("partners create --test issues a pss_test_ key beside the live one; its principal writes test records", async () => {
    expect(testKey).toMatch(/^pss_test_[A-Za-z0-9_-]{43}$/);
    expect(partner.apiKey).toMatch(/^pss_live_/);
    const [row] = await api.sql`SELECT mode, key_prefix FROM api_keys WHERE id = ${partner.test!.keyId}`;
    expect(row).toEqual({ mode: "test", key_prefix: testKey.slice(0, 15) });
    expect((await as(testKey).get("/partner/v1/health")).status).toBe(200);
  });
});

describe("the two modes are kept apart", () => {
  test("the same external ID names one live and one test record; each key reads only its own", async () => {
    const brokerId = uniqueName("broker");
    const listingId = uniqueName("listing");
    const liveBroker = await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker({ name: "Live Jane" }));
    const testBroker = await as(testKey).put(`/partner/v1/brokers/${brokerId}`, sample.broker({ name: "Test Jane" }));
    expect([liveBroker.status, testBroker.status]).toEqual([201, 201]);
    expect(testBroker.body.serviceBrokerId).not.toBe(liveBroker.body.serviceBrokerId);

    const live = await partner.put(
      `/partner/v1/listings/${listingId}`,
      sample.listing(brokerId, { title: "Live title" }),
    );
    const testing = await as(testKey).put(
      `/partner/v1/listings/${listingId}`,
      sample.listing(brokerId, { title: "Test title" }),
    );
    expect([live.status, testing.status]).toEqual([201, 201]);
    expect(testing.body.serviceListingId).not.toBe(live.body.serviceListingId);

    const liveRead = (await partner.get(`/partner/v1/listings/${listingId}`)).body.listing;
    const testRead = (await as(testKey).get(`/partner/v1/listings/${listingId}`)).body.listing;
    expect(liveRead).toMatchObject({
      title: "Live title",
      mode: "live",
      serviceBrokerId: liveBroker.body.serviceBrokerId,
      serviceListingUrl: `${BASE}/listings/${live.body.serviceListingId}`,
    });
    expect(testRead).toMatchObject({
      title: "Test title",
      mode: "test",
      serviceBrokerId: testBroker.body.serviceBrokerId,
    });
    expect((await as(testKey).get(`/partner/v1/brokers/${brokerId}`)).body.broker).toMatchObject({
      name: "Test Jane",
      mode: "test",
    });
    expect((await partner.get(`/partner/v1/brokers/${brokerId}`)).body.broker).toMatchObject({
      name: "Live Jane",
      mode: "live",
    });

    // An update in one mode leaves the other alone.
    expect((await as(testKey).put(`/partner/v1/listings/${listingId}`, { status: "SOLD" })).status).toBe(200);
    expect((await partner.get(`/partner/v1/listings/${listingId}`)).body.listing.status).toBe("FOR_SALE");
  });

  test("a record of one mode does not exist for the other: 404, and a listing cannot name the other mode's broker", async () => {
    const { brokerId, listingId } = await brokerAndListing(partner.apiKey);
    expect(await as(testKey).get(`/partner/v1/listings/${listingId}`)).toMatchObject({
      status: 404,
      body: { error: "Listing not found" },
    });
    expect(await as(testKey).get(`/partner/v1/brokers/${brokerId}`)).toMatchObject({
      status: 404,
      body: { error: "Broker not found" },
    });
    const refused = await as(testKey).put(`/partner/v1/listings/${uniqueName("listing")}`, sample.listing(brokerId));
    expect(refused).toMatchObject({ status: 404, body: { error: "Broker not found" } });
    // Another partner's test key sees neither.
    expect((await as(other.test!.apiKey).get(`/partner/v1/listings/${listingId}`)).status).toBe(404);
  });

  test("paging (and updatedSince) goes through one mode's records only", async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const liveMade = await brokerAndListing(partner.apiKey);
    const testMade = await brokerAndListing(testKey);
    // Pages until the pass ends or `wanted` is seen: the paging horizon is cluster-wide, so a long transaction of
    // another database on a shared server can keep a pass open (nextCursor set, nothing settled) for a while.
    const all = async (key: string, path: string, wanted: string) => {
      const ids: string[] = [];
      const deadline = Date.now() + 30_000;
      let cursor: string | null = null;
      do {
        const res: TestResponse = await as(key).get(
          `${path}${path.includes("?") ? "&" : "?"}limit=2${cursor ? `&cursor=${cursor}` : ""}`,
        );
        expect(res.status).toBe(200);
        ids.push(
          ...res.body.results.map(
            (r: { externalListingId?: string; externalBrokerId?: string; mode: string }) =>
              `${r.mode}:${r.externalListingId ?? r.externalBrokerId}`,
          ),
        );
        cursor = res.body.nextCursor;
      } while (cursor && !ids.includes(wanted) && Date.now() < deadline);
      return ids;
    };
    const liveListings = await all(
      partner.apiKey,
      `/partner/v1/listings?updatedSince=${since}`,
      `live:${liveMade.listingId}`,
    );
    const testListings = await all(testKey, `/partner/v1/listings?updatedSince=${since}`, `test:${testMade.listingId}`);
    expect(liveListings).toContain(`live:${liveMade.listingId}`);
    expect(liveListings.every((id) => id.startsWith("live:"))).toBe(true);
    expect(testListings).toContain(`test:${testMade.listingId}`);
    expect(testListings.every((id) => id.startsWith("test:"))).toBe(true);
    const testBrokers = await all(testKey, "/partner/v1/brokers", `test:${testMade.brokerId}`);
    expect(testBrokers).toContain(`test:${testMade.brokerId}`);
    expect(testBrokers).not.toContain(`live:${liveMade.brokerId}`);
    expect(testBrokers.every((id) => id.startsWith("test:"))).toBe(true);
  });
});

describe("previews of test records", () => {
  test("serviceListingUrl and serviceProfileUrl are signed, short-lived preview links, marked as previews", async () => {
    const made = await brokerAndListing(testKey, { title: "Canary bakery" });
    const url = new URL(made.listing.serviceListingUrl);
    expect(`${url.origin}${url.pathname}`).toBe(`${BASE}/preview/listings/${made.listing.serviceListingId}`);
    const expires = Number(url.searchParams.get("expires"));
    expect(expires * 1000).toBeGreaterThan(Date.now() + 55 * 60_000);
    expect(expires * 1000).toBeLessThan(Date.now() + 70 * 60_000);
    // The read-back hands out a working link too.
    expect((await as(testKey).get(`/partner/v1/listings/${made.listingId}`)).body.listing.serviceListingUrl).toMatch(
      /\/preview\/listings\/\d+\?expires=\d+&signature=/,
    );

    const res = await open(made.listing.serviceListingUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-robots-tag")).toBe("noindex, nofollow");
    expect(res.headers.get("cache-control")).toBe("private, no-store");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    const page = await res.text();
    expect(page).toContain("Preview of a test listing.");
    expect(page).toContain("<title>Preview – Canary bakery");
    expect(page).toContain('<meta name="robots" content="noindex, nofollow">');
    expect(page).not.toContain('rel="canonical"');
    expect(page).toContain("Status FOR_SALE: live, this listing would be visible to buyers.");
    // No inquiry form (a buyer's inquiry could only be refused): a pointer to simulated leads instead.
    expect(page).not.toContain("/inquiry");
    expect(page).toContain("POST /partner/v1/test/listings/{externalListingId}/leads");
    // The broker link on the page leads to the broker's preview, not to a public profile that does not exist.
    const brokerLink = page.match(/href="([^"]*\/preview\/brokers\/[^"]*)"/)?.[1]?.replaceAll("&amp;", "&");
    expect(brokerLink).toBeDefined();
    const profile = await open(brokerLink!);
    expect(profile.status).toBe(200);
    expect(await profile.text()).toContain("Preview of a test broker.");
    expect((await open(made.broker.serviceProfileUrl)).status).toBe(200);
  });

  test("without a valid link or the owner's test key the preview is refused; a live record has no preview", async () => {
    const made = await brokerAndListing(testKey);
    const id = made.listing.serviceListingId;
    const link = new URL(made.listing.serviceListingUrl);
    const tampered = `${BASE}/preview/listings/${id}?expires=${Number(link.searchParams.get("expires")) + 300}&signature=${link.searchParams.get("signature")}`;
    const otherRecord = `${BASE}/preview/listings/${id}?expires=${link.searchParams.get("expires")}&signature=${new URL((await brokerAndListing(testKey)).listing.serviceListingUrl).searchParams.get("signature")}`;
    for (const url of [`${BASE}/preview/listings/${id}`, tampered, otherRecord]) {
      const res = await open(url);
      expect(res.status).toBe(403);
      expect(await res.text()).toContain("This preview link is not valid.");
    }
    // Signed with the same key, but expired.
    const old = createPreviewLinks({
      sql: api.sql,
      publicBaseUrl: BASE,
      ttlSeconds: 60,
      now: () => Date.now() - 3 * 3600_000,
    });
    const expired = await open(await old.listingUrl(id));
    expect(expired.status).toBe(403);
    expect(await expired.text()).toContain("This preview link has expired.");

    // The owner's test key opens it; a live key or another partner's test key does not.
    expect((await open(`${BASE}/preview/listings/${id}`, { authorization: `Bearer ${testKey}` })).status).toBe(200);
    expect((await open(`${BASE}/preview/listings/${id}`, { authorization: `Bearer ${partner.apiKey}` })).status).toBe(
      403,
    );
    expect(
      (await open(`${BASE}/preview/listings/${id}`, { authorization: `Bearer ${other.test!.apiKey}` })).status,
    ).toBe(403);

    const live = await brokerAndListing(partner.apiKey);
    expect(
      (await open(`${BASE}/preview/listings/${live.listing.serviceListingId}`, { authorization: `Bearer ${testKey}` }))
        .status,
    ).toBe(404);
    expect((await open(`${BASE}/preview/listings/abc`)).status).toBe(404);
  });

  test("the public page, JSON view and profile of a test record do not exist", async () => {
    const made = await brokerAndListing(testKey);
    expect((await open(`${BASE}/listings/${made.listing.serviceListingId}`)).status).toBe(404);
    expect((await open(`${BASE}/brokers/${made.broker.serviceBrokerId}`)).status).toBe(404);
    expect((await call(api.marketplaceUrl, "GET", `/v1/listings/${made.listing.serviceListingId}`)).status).toBe(404);
    expect((await call(api.marketplaceUrl, "GET", `/v1/brokers/${made.broker.serviceBrokerId}`)).status).toBe(404);
    // No buyer can send a lead to it.
    const lead = await call(api.marketplaceUrl, "POST", `/v1/listings/${made.listing.serviceListingId}/leads`, {
      body: { name: "Ann", email: "ann@example.com", message: "Hello" },
    });
    expect(lead).toMatchObject({ status: 404, body: { error: "Listing not found" } });
  });
});

describe("test-only routes", () => {
  test("a live key gets 403 and nothing happens", async () => {
    const { listingId } = await brokerAndListing(partner.apiKey);
    const lead = await as(partner.apiKey).post(`/partner/v1/test/listings/${listingId}/leads`, {});
    expect(lead).toMatchObject({
      status: 403,
      body: { status: "error", error: expect.stringContaining("test mode only") },
    });
    const purge = await as(partner.apiKey).del("/partner/v1/test-data");
    expect(purge.status).toBe(403);
    expect((await partner.get(`/partner/v1/listings/${listingId}`)).status).toBe(200);
    expect((await call(api.baseUrl, "DELETE", "/partner/v1/test-data")).status).toBe(401);
  });
});

describe("simulated leads and test-mode lead counts", () => {
  test("a simulated lead is stored as a test lead that is never e-mailed; only the test key counts it", async () => {
    const p = await api.createPartner({ leadTracking: true, test: true });
    const key = p.test!.apiKey;
    const made = await brokerAndListing(key);
    const countOffice = (k: string, q = "") => as(k).get(`/partner/v1/offices/${p.officeId}/leads/count${q}`);
    expect((await countOffice(key)).body.totalLeads).toBe(0);

    const first = await as(key).post(`/partner/v1/test/listings/${made.listingId}/leads`, {});
    expect(first).toMatchObject({
      status: 202,
      body: { status: "success", leadId: expect.stringMatching(/^[0-9a-f-]{36}$/) },
    });
    const backdated = await as(key).post(`/partner/v1/test/listings/${made.listingId}/leads`, {
      name: "Ann Buyer",
      email: "ann@example.com",
      message: "Is it still available?",
      submittedAt: "2024-03-01T12:00:00Z",
    });
    expect(backdated.status).toBe(202);
    const [row] =
      await api.sql`SELECT mode, delivery_state, buyer_name, created_at FROM leads WHERE id = ${backdated.body.leadId}`;
    expect(row).toEqual({
      mode: "test",
      delivery_state: "skipped",
      buyer_name: "Ann Buyer",
      created_at: new Date("2024-03-01T12:00:00Z"),
    });
    // The database itself refuses a test lead that could be sent.
    expect(api.sql`UPDATE leads SET delivery_state = 'pending' WHERE id = ${backdated.body.leadId}`).rejects.toThrow(
      /leads_test_never_sent/,
    );

    expect((await countOffice(key)).body).toMatchObject({ officeId: p.officeId, totalLeads: 2 });
    expect(
      (await countOffice(key, "?startDate=2024-01-01T00:00:00Z&endDate=2024-06-01T00:00:00Z")).body.totalLeads,
    ).toBe(1);
    expect((await countOffice(key, "?startDate=2025-01-01T00:00:00Z")).body.totalLeads).toBe(1);
    const org = await as(key).get(`/partner/v1/organizations/${p.organizationId}/leads/count`);
    expect(org.body).toMatchObject({ totalLeads: 2, officeBreakdown: [{ officeId: p.officeId, totalLeads: 2 }] });
    // The live key never counts them.
    expect((await countOffice(p.apiKey)).body.totalLeads).toBe(0);
    expect((await as(p.apiKey).get(`/partner/v1/organizations/${p.organizationId}/leads/count`)).body.totalLeads).toBe(
      0,
    );
  });

  test("leads arrive only while the listing's status is one buyers see; unknown listings and future dates are refused", async () => {
    const made = await brokerAndListing(testKey, { status: "DRAFT" });
    const draft = await as(testKey).post(`/partner/v1/test/listings/${made.listingId}/leads`, {});
    expect(draft).toMatchObject({
      status: 409,
      body: { status: "error", error: expect.stringContaining("this listing is DRAFT") },
    });
    expect((await as(testKey).post(`/partner/v1/test/listings/${uniqueName("none")}/leads`, {})).body).toEqual({
      status: "error",
      error: "Listing not found",
    });
    expect((await as(testKey).put(`/partner/v1/listings/${made.listingId}`, { status: "UNDER_CONTRACT" })).status).toBe(
      200,
    );
    const future = await as(testKey).post(`/partner/v1/test/listings/${made.listingId}/leads`, {
      submittedAt: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expect(future).toMatchObject({ status: 400, body: { error: "submittedAt: must not be in the future" } });
    expect((await as(testKey).post(`/partner/v1/test/listings/${made.listingId}/leads`, { unknown: 1 })).status).toBe(
      400,
    );
    expect(
      (await as(testKey).post(`/partner/v1/test/listings/${made.listingId}/leads`, { message: "Fine now" })).status,
    ).toBe(202);
    // A live listing with the same external ID is not the test one.
    const live = await brokerAndListing(partner.apiKey);
    expect((await as(testKey).post(`/partner/v1/test/listings/${live.listingId}/leads`, {})).status).toBe(404);
  });
});

describe("purging test records", () => {
  test("DELETE /partner/v1/test-data deletes the partner's test records and their leads, never a live record", async () => {
    const p = await api.createPartner({ leadTracking: true, test: true });
    const key = p.test!.apiKey;
    const sameId = uniqueName("listing");
    const brokerId = uniqueName("broker");
    for (const k of [p.apiKey, key]) {
      expect((await as(k).put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
      expect((await as(k).put(`/partner/v1/listings/${sameId}`, sample.listing(brokerId))).status).toBe(201);
    }
    const second = await brokerAndListing(key);
    expect((await as(key).post(`/partner/v1/test/listings/${sameId}/leads`, {})).status).toBe(202);
    // Another partner's test records stay.
    const foreign = await brokerAndListing(other.test!.apiKey);

    const res = await as(key).del("/partner/v1/test-data");
    expect(res).toMatchObject({
      status: 200,
      body: { status: "success", deleted: { listings: 2, brokers: 2, leads: 1 } },
    });
    expect((await as(key).get(`/partner/v1/listings/${sameId}`)).status).toBe(404);
    expect((await as(key).get(`/partner/v1/listings/${second.listingId}`)).status).toBe(404);
    expect((await as(key).get(`/partner/v1/brokers/${brokerId}`)).status).toBe(404);
    expect((await as(key).get("/partner/v1/listings")).body.results).toEqual([]);
    expect((await as(p.apiKey).get(`/partner/v1/listings/${sameId}`)).body.listing).toMatchObject({
      mode: "live",
      status: "FOR_SALE",
    });
    expect((await as(p.apiKey).get(`/partner/v1/brokers/${brokerId}`)).status).toBe(200);
    expect((await as(other.test!.apiKey).get(`/partner/v1/listings/${foreign.listingId}`)).status).toBe(200);
    // Again: nothing left to delete; the external IDs can be used afresh.
    expect((await as(key).del("/partner/v1/test-data")).body.deleted).toEqual({ listings: 0, brokers: 0, leads: 0 });
    expect((await as(key).put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
  });

  test("the retention job deletes test records nobody wrote for the retention, and old history; one instance works at a time", async () => {
    const oldTest = await brokerAndListing(testKey);
    const recentTest = await brokerAndListing(testKey);
    const oldLive = await brokerAndListing(partner.apiKey);
    expect((await as(testKey).post(`/partner/v1/test/listings/${oldTest.listingId}/leads`, {})).status).toBe(202);
    const longAgo = new Date(Date.now() - 40 * 86_400_000);
    await api.sql`UPDATE listings SET updated_at = ${longAgo} WHERE id IN (${oldTest.listing.serviceListingId}, ${oldLive.listing.serviceListingId})`;
    await api.sql`UPDATE brokers SET updated_at = ${longAgo} WHERE id IN (${oldTest.broker.serviceBrokerId}, ${oldLive.broker.serviceBrokerId})`;
    await api.sql`UPDATE listing_history SET changed_at = ${new Date(Date.now() - 200 * 86_400_000)} WHERE listing_id = ${oldLive.listing.serviceListingId}`;

    const job = createRetentionJob({
      sql: api.sql,
      logger: silentLogger,
      testDataRetentionDays: 30,
      historyRetentionDays: 180,
      intervalMs: 0,
    });
    // While another instance holds the job's lease, this one skips its round.
    const other = createLeaderLease({ sql: api.sql, name: RETENTION_LEASE, ttlMs: 60_000 });
    expect(await other.acquire()).toBe(true);
    try {
      expect(await job.runOnce()).toEqual({ ran: false });
    } finally {
      await other.release();
    }
    const round = await job.runOnce();
    expect(round).toMatchObject({ ran: true });
    if (!round.ran) throw new Error("unreachable");
    expect(round.testData.listings).toBeGreaterThanOrEqual(1);
    expect(round.testData.leads).toBeGreaterThanOrEqual(1);
    expect(round.historyEntries).toBeGreaterThanOrEqual(1);

    expect((await as(testKey).get(`/partner/v1/listings/${oldTest.listingId}`)).status).toBe(404);
    expect((await as(testKey).get(`/partner/v1/brokers/${oldTest.brokerId}`)).status).toBe(404);
    expect((await as(testKey).get(`/partner/v1/listings/${recentTest.listingId}`)).status).toBe(200);
    expect((await as(partner.apiKey).get(`/partner/v1/listings/${oldLive.listingId}`)).status).toBe(200);
    expect((await as(partner.apiKey).get(`/partner/v1/brokers/${oldLive.brokerId}`)).status).toBe(200);
    expect((await as(partner.apiKey).get(`/partner/v1/listings/${oldLive.listingId}/history`)).body.results).toEqual(
      [],
    );
    expect((await as(testKey).get(`/partner/v1/listings/${recentTest.listingId}/history`)).body.results).toHaveLength(
      1,
    );
  });
});
