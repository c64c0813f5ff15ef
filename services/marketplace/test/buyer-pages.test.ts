// The public pages in a real headless Chromium: the browser opens the very serviceListingUrl and
// serviceProfileUrl the partner API returned (their host is routed to this test's server).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { uniqueName } from "../../../test/support/env.ts";
import { launchBrowser, type Browser } from "./support/browser.ts";
import { sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";

const PUBLIC_HOST = "market.example.test";
let api: ApiHarness;
let partner: Partner;
let browser: Browser;
let brokerExternalId: string;
let profileUrl: string;

beforeAll(async () => {
  api = await startApi({ relay: false });
  partner = await api.createPartner();
  brokerExternalId = uniqueName("broker");
  const put = await partner.put(
    `/partner/v1/brokers/${brokerExternalId}`,
    sample.broker({ name: "Jane Broker", avatarUrl: "https://images.example.com/jane.jpg" }),
  );
  profileUrl = put.body.serviceProfileUrl;
  await api.sql`UPDATE brokers SET avatar_state = 'ready', avatar_width = 400, avatar_height = 400,
                avatar_variants = ${api.sql.json([{ width: 200, height: 200, format: "jpg", url: `https://${PUBLIC_HOST}/media/jane-200.jpg` }])}
                WHERE id = ${put.body.serviceBrokerId}`;
  // Installs Chromium with apt on a fresh machine (CI runs as root): allow for the download.
  browser = await launchBrowser();
  await browser.context.route("**/*", async (route) => {
    const url = new URL(route.request().url());
    if (url.host !== PUBLIC_HOST) return route.abort();
    const res = await fetch(api.marketplaceUrl + url.pathname + url.search);
    await route.fulfill({
      status: res.status,
      headers: Object.fromEntries(res.headers),
      body: Buffer.from(await res.arrayBuffer()),
    });
  });
}, 600_000);
afterAll(async () => {
  await browser?.close();
  await api?.stop();
});

async function createListing(overrides: Record<string, unknown> = {}) {
  const res = await partner.put(
    `/partner/v1/listings/${uniqueName("listing")}`,
    sample.listing(brokerExternalId, overrides),
  );
  expect(res.status).toBe(201);
  return res.body as { serviceListingId: number; serviceListingUrl: string };
}

async function open(url: string): Promise<{ page: Page; status: number }> {
  const page = await browser.context.newPage();
  const res = await page.goto(url);
  return { page, status: res!.status() };
}

const meta = (page: Page, selector: string, attribute = "content") =>
  page.locator(selector).first().getAttribute(attribute);

describe("the listing page behind serviceListingUrl", () => {
  test("shows the listing with title, meta tags for sharing, the under-contract badge and accessible markup", async () => {
    const listing = await createListing({
      status: "UNDER_CONTRACT",
      description: "Busy corner spot.\n\nPhone: 512-555-0111.",
    });
    const image = `https://${PUBLIC_HOST}/media/front-1200.jpg`;
    await api.sql`UPDATE listing_photos SET state = 'ready', width = 1600, height = 1200,
                  variants = ${api.sql.json([
                    { width: 1200, height: 900, format: "jpg", url: image },
                    { width: 1200, height: 900, format: "webp", url: `https://${PUBLIC_HOST}/media/front-1200.webp` },
                  ])}
                  WHERE listing_id = ${listing.serviceListingId} AND sort_key = 1`;
    const { page, status } = await open(listing.serviceListingUrl);
    expect(status).toBe(200);

    expect(await page.title()).toBe("Profitable taqueria downtown – Restaurant for sale in Austin, TX");
    expect(await page.locator("html").getAttribute("lang")).toBe("en");
    expect(await meta(page, 'link[rel="canonical"]', "href")).toBe(listing.serviceListingUrl);
    expect(await meta(page, 'meta[property="og:url"]')).toBe(listing.serviceListingUrl);
    expect(await meta(page, 'meta[property="og:title"]')).toBe(
      "Profitable taqueria downtown – Restaurant for sale in Austin, TX",
    );
    expect(await meta(page, 'meta[property="og:description"]')).toBe("Busy corner spot.");
    expect(await meta(page, 'meta[name="description"]')).toBe("Busy corner spot.");
    expect(await meta(page, 'meta[property="og:image"]')).toBe(image);

    expect(await page.locator("h1").allInnerTexts()).toEqual(["Profitable taqueria downtown"]);
    await expect(page.locator(".badge").isVisible()).resolves.toBe(true);
    expect(await page.locator(".badge").innerText()).toBe("Under contract");
    expect(await page.getByRole("heading", { level: 2 }).allInnerTexts()).toEqual([
      "Photos",
      "About this business",
      "Financials",
      "Business details",
      "Listed by",
      "Ask the broker about this business",
    ]);
    expect(await page.locator("p.price").innerText()).toBe("Asking $450,000");

    const alts = await page
      .locator("img")
      .evaluateAll((imgs) => imgs.map((i) => (i as unknown as { alt: string }).alt));
    expect(alts).toEqual(["Photo 1 of 1: Profitable taqueria downtown", "Photo of Jane Broker"]);
    const brokerLink = page.getByRole("link", { name: "Jane Broker" });
    expect(await brokerLink.getAttribute("href")).toBe(profileUrl);

    const text = await page.locator("body").innerText();
    expect(text).toContain("Busy corner spot.");
    expect(text).not.toMatch(/555|jane\.broker@example\.com|leads@crm|\+1 512/);
    await page.close();
  });

  test("each visibility level shows exactly its allowed part of the address", async () => {
    const address = {
      streetAddress1: "1 Congress Ave",
      city: "Austin",
      state: "TX",
      postalCode: "78701",
      country: "US",
    };
    const cases = [
      { visibility: "SHOW_FULL_ADDRESS", shown: ["1 Congress Ave", "Austin", "TX 78701"], hidden: [] },
      { visibility: "SHOW_CITY_STATE", shown: ["Austin, TX"], hidden: ["Congress", "78701"] },
      { visibility: "SHOW_STATE_ONLY", shown: ["TX"], hidden: ["Congress", "78701", "Austin"] },
    ];
    for (const c of cases) {
      const listing = await createListing({ location: { ...address, visibility: c.visibility } });
      const { page } = await open(listing.serviceListingUrl);
      const text = await page.locator("body").innerText();
      const head = await page.locator("head").innerHTML();
      for (const s of c.shown)
        expect({ visibility: c.visibility, shows: s, found: text.includes(s) }).toEqual({
          visibility: c.visibility,
          shows: s,
          found: true,
        });
      for (const s of c.hidden)
        expect({ visibility: c.visibility, hides: s, found: text.includes(s) || head.includes(s) }).toEqual({
          visibility: c.visibility,
          hides: s,
          found: false,
        });
      await page.close();
    }
  });

  test("partner text is shown as text: markup in a title never runs or renders", async () => {
    const title = `<img src=x onerror="document.title='pwned'"> Taco & "Co" <script>document.title='pwned'</script>`;
    const listing = await createListing({ title });
    const { page } = await open(listing.serviceListingUrl);
    expect(await page.locator("h1").innerText()).toBe(title);
    expect(await page.title()).toBe(`${title} – Restaurant for sale in Austin, TX`);
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    expect(await page.locator("body script").count()).toBe(0);
    await page.close();
  });

  test("a listing that was never public answers a 404 page", async () => {
    const listing = await createListing({ status: "DRAFT" });
    for (const url of [listing.serviceListingUrl, `https://${PUBLIC_HOST}/listings/not-a-number`]) {
      const { page, status } = await open(url);
      expect(status).toBe(404);
      expect(await page.title()).toBe("Listing not found");
      expect(await page.locator("h1").innerText()).toBe("Listing not found");
      expect(await meta(page, 'meta[name="robots"]')).toBe("noindex");
      await page.close();
    }
  });
});

describe("the broker page behind serviceProfileUrl", () => {
  test("shows the public profile and the broker's visible listings, never an e-mail address or phone number", async () => {
    const live = await createListing({ title: "Live taqueria", status: "UNDER_CONTRACT" });
    await createListing({ title: "Draft taqueria", status: "DRAFT" });
    const { page, status } = await open(profileUrl);
    expect(status).toBe(200);
    expect(await page.title()).toBe("Jane Broker – Business broker");
    expect(await meta(page, 'meta[property="og:url"]')).toBe(profileUrl);
    expect(await meta(page, 'link[rel="canonical"]', "href")).toBe(profileUrl);
    expect(await meta(page, 'meta[property="og:image"]')).toBe(`https://${PUBLIC_HOST}/media/jane-200.jpg`);
    expect(await page.locator("h1").innerText()).toBe("Jane Broker");
    expect(await page.getByAltText("Photo of Jane Broker").count()).toBe(1);
    const text = await page.locator("body").innerText();
    expect(text).toContain("Twenty years selling Texas businesses.");
    expect(text).toContain("TX-123");
    expect(text).toContain("Austin, TX, US");
    expect(text).not.toContain("Draft taqueria");
    expect(text).not.toMatch(/@|555/);

    // Following the listing link opens its page, badge included.
    await page.getByRole("link", { name: "Live taqueria" }).click();
    await page.waitForURL(live.serviceListingUrl);
    expect(await page.locator("h1").innerText()).toBe("Live taqueria");
    expect(await page.locator(".badge").allInnerTexts()).toEqual(["Under contract"]);
    await page.close();
  });

  test("an unknown broker answers a 404 page", async () => {
    const { page, status } = await open(`https://${PUBLIC_HOST}/brokers/999999999999`);
    expect(status).toBe(404);
    expect(await page.title()).toBe("Broker not found");
    await page.close();
  });
});
