// The portal's pages against the real API, report tracker and request log (issue 42): what each page shows, and the
// lead-access rule: a person without lead access finds no lead figure, chart, count or event on any page, in either
// mode (every page's HTML is read for it), while a person with it sees them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { silentLogger } from "@pss/service-kit";
import { call, sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import { createReportTracker } from "../../webhooks/src/reports/report-tracker.ts";
import { uniqueName } from "../../../test/support/env.ts";
import { startPortal, twoSignedIn, type PortalClient, type PortalHarness } from "./support/portal-harness.ts";

let api: ApiHarness;
let portal: PortalHarness;
let partner: Partner;
let withLeads: PortalClient;
let withoutLeads: PortalClient;
const brokerId = uniqueName("broker");
const listingId = uniqueName("listing");
const testListingId = uniqueName("test-listing");

/**
 * What lead data looks like on a page: inquiry figures and charts, lead counts, lead.received. (The word "inquiries"
 * alone is not one: quality advice says listings with photos "get more inquiries".)
 */
const LEAD_MARKERS = [
  /Inquiries, last 30 days/,
  /Views and inquiries/,
  /Inquiries: \d/,
  /inquiries per day/i,
  /lead\.received/i,
  /leads\/count/i,
  /lead counts?\b/i,
];
const leadMarkersIn = (html: string) => LEAD_MARKERS.filter((m) => m.test(html)).map(String);

const pages = (mode: "live" | "test", listing: string) => [
  `/portal/${mode}`,
  `/portal/${mode}/listings`,
  `/portal/${mode}/listings/${encodeURIComponent(listing)}`,
  `/portal/${mode}/brokers`,
  `/portal/${mode}/brokers/${encodeURIComponent(brokerId)}`,
  `/portal/${mode}/requests`,
  `/portal/${mode}/webhooks`,
  "/portal/account",
];

/** Waits until a request whose path starts with `path` is in the log (it is recorded after its answer went out). */
async function logged(path: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    await api.requestLog!.flush();
    const [row] =
      await api.sql`SELECT 1 FROM api_request_log WHERE partner_id = ${partner.partnerId} AND path LIKE ${`${path}%`} LIMIT 1`;
    if (row) return;
    if (Date.now() > deadline) throw new Error(`no request to ${path} in the log`);
    await Bun.sleep(50);
  }
}

beforeAll(async () => {
  api = await startApi({ relay: false, requestLog: true });
  portal = await startPortal({ publicBaseUrl: api.baseUrl, invitations: false });
  partner = await api.createPartner({ leadTracking: true, test: true });
  const tracker = createReportTracker({ sql: api.sql, logger: silentLogger });

  for (const p of [partner, partner.test!]) {
    expect((await p.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
  }
  // A live listing without an asking price (a warning), and a test listing with simulated inquiries.
  const live = await partner.put(
    `/partner/v1/listings/${listingId}`,
    sample.listing(brokerId, { financials: { revenue: 900000 } }),
  );
  expect(live.status).toBe(201);
  const test = await partner.test!.put(`/partner/v1/listings/${testListingId}`, sample.listing(brokerId));
  expect(test.status).toBe(201);
  for (let i = 0; i < 3; i++)
    expect(
      (
        await call(api.baseUrl, "POST", `/partner/v1/test/listings/${testListingId}/leads`, {
          key: partner.test!.apiKey,
          body: {},
        })
      ).status,
    ).toBe(202);
  await tracker.recompute(String(live.body.serviceListingId));
  await tracker.recompute(String(test.body.serviceListingId));
  // Lead counts read by the partner: requests the log shows only to people with lead access.
  expect((await partner.get(`/partner/v1/offices/${partner.officeId}/leads/count`)).status).toBe(200);
  await logged(`/partner/v1/offices/${partner.officeId}/leads/count`);

  ({ withLeads, withoutLeads } = await twoSignedIn(portal, api.baseUrl, partner.apiKey, "pages"));
}, 90_000);
afterAll(async () => {
  await portal?.stop();
  await api?.stop();
});

describe("lead access", () => {
  test("a person without it finds no lead figure, chart, count or event on any page of either mode", async () => {
    const found: Record<string, string[]> = {};
    for (const path of [...pages("live", listingId), ...pages("test", testListingId)]) {
      const res = await withoutLeads.get(path);
      expect(res.status).toBe(200);
      const markers = leadMarkersIn(res.text);
      if (markers.length) found[path] = markers;
    }
    expect(found).toEqual({});
  });

  test("a person with it sees inquiries on the overview and the listing, and the lead-count requests", async () => {
    const overview = await withLeads.get("/portal/test");
    expect(overview.text).toContain("Inquiries, last 30 days");
    expect(overview.text).toMatch(/Inquiries: 3 inquiries/);
    const listing = await withLeads.get(`/portal/test/listings/${encodeURIComponent(testListingId)}`);
    expect(listing.text).toContain("Views and inquiries, last 30 days");
    const requests = await withLeads.get("/portal/live/requests");
    expect(requests.text).toContain(`/partner/v1/offices/${partner.officeId}/leads/count`);
    const hidden = await withoutLeads.get("/portal/live/requests");
    expect(hidden.text).toContain(`PUT /partner/v1/listings/${listingId}`);
  });
});

describe("pages", () => {
  test("the overview counts listings by state and status and names each open warning with its fix", async () => {
    const res = await withoutLeads.get("/portal/live");
    expect(res.text).toContain("Listings by processing state");
    expect(res.text).toContain('href="/portal/live/listings?warning=ASKING_PRICE_MISSING"');
    expect(res.text).toContain("Send financials.askingPrice");
    expect(res.text).toMatch(/Processing: 1 listings/);
  });

  test("a listing's page tells its story: steps, warnings with their fix, photos, history through which key", async () => {
    const res = await withoutLeads.get(`/portal/live/listings/${encodeURIComponent(listingId)}`);
    const text = res.text;
    expect(text).toContain("Profitable taqueria downtown");
    expect(text).toContain("Accepted and stored");
    expect(text).toContain("Waiting to be downloaded and processed");
    expect(text).toContain('data-quality="warnings"');
    expect(text).toContain("ASKING_PRICE_MISSING");
    expect(text).toContain("How to fix: Send financials.askingPrice");
    expect(text).toContain("https://images.example.com/front.jpg");
    expect(text).toContain(`(key ${partner.keyId})`);
    expect(text).toContain(`${api.baseUrl}/listings/`);
    // The test record links to its preview, never to a public page.
    const test = await withoutLeads.get(`/portal/test/listings/${encodeURIComponent(testListingId)}`);
    expect(test.text).toContain("Preview of this test record");
    expect(test.text).toContain("/preview/");
  });

  test("the listings list filters by warning, state and search; another mode's listing is not found", async () => {
    const warned = await withoutLeads.get("/portal/live/listings?warning=ASKING_PRICE_MISSING");
    expect(warned.text).toContain(listingId);
    const none = await withoutLeads.get("/portal/live/listings?warning=TITLE_MISSING");
    expect(none.text).not.toContain(listingId);
    expect(
      (await withoutLeads.get(`/portal/live/listings?q=${encodeURIComponent(listingId.slice(0, 12))}`)).text,
    ).toContain(listingId);
    expect((await withoutLeads.get("/portal/live/listings?q=taqueria")).text).toContain(listingId);
    expect((await withoutLeads.get("/portal/live/listings?state=LIVE")).text).not.toContain(listingId);
    expect((await withoutLeads.get(`/portal/live/listings/${encodeURIComponent(testListingId)}`)).status).toBe(404);
  });

  test("a broker's page masks the lead-forwarding address", async () => {
    const res = await withoutLeads.get(`/portal/live/brokers/${encodeURIComponent(brokerId)}`);
    expect(res.text).toContain("l***@crm.example.com");
    // Nowhere in full: not in the details, not in the change history.
    expect(res.text).not.toContain("leads@crm.example.com");
    expect(res.text).toContain("Jane Broker");
  });

  test("the API requests page shows a refused request's answer and filters by status class", async () => {
    const bad = await partner.put(`/partner/v1/listings/${uniqueName("bad")}`, { status: "NOPE" });
    expect(bad.status).toBe(400);
    await logged("/partner/v1/listings/bad-");
    const res = await withoutLeads.get("/portal/live/requests?class=4xx");
    expect(res.text).toContain("must be one of DRAFT");
    expect(res.text).not.toContain(`PUT /partner/v1/listings/${listingId}`);
  });

  test("pages of another partner's data cannot be reached: every read is the signed-in person's partner", async () => {
    const other = await api.createPartner();
    const otherListing = uniqueName("theirs");
    await other.put(`/partner/v1/brokers/${brokerId}`, sample.broker());
    await other.put(`/partner/v1/listings/${otherListing}`, sample.listing(brokerId));
    expect((await withLeads.get(`/portal/live/listings/${encodeURIComponent(otherListing)}`)).status).toBe(404);
  });

  test("every page is HTML without scripts, never cached, never indexed", async () => {
    const res = await withLeads.get("/portal/live");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.text).not.toContain("<script");
    expect(res.text).toContain('<meta name="robots" content="noindex, nofollow">');
  });
});
