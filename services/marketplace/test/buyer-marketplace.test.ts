// The buyers' marketplace in a real Chromium (Debian's, driven by playwright-core) against a live marketplace:
// the API, the indexer, the media service and the leads workers on the real servers (support/marketplace.ts).
// A buyer searches, opens a listing and sends an inquiry without JavaScript; the lead is counted for the
// broker's office and e-mailed once. Form errors, hidden listings, SEO files, accessibility (axe-core) and
// phone widths are checked on every page type, and each page type is photographed at desktop and phone width.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { createSitemaps, SITEMAP_MAX_URLS } from "../src/buyers/pages/sitemap.ts";
import { axeViolations, launchChromium, type ChromiumSession } from "./support/browser.ts";
import { indexedState } from "../../indexer/test/support/indexer-harness.ts";
import { call } from "../../api/test/support/harness.ts";
import { withinOneRateWindow } from "../../../test/support/env.ts";
import { leadMessageId, PUBLIC_HOST, startMarketplace, type Marketplace } from "./support/marketplace.ts";

let m: Marketplace;
let chromium: ChromiumSession;
let noJs: BrowserContext;
let withJs: BrowserContext;

const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 375, height: 812 };
// Committed screenshots are rewritten only on request (UPDATE_SCREENSHOTS=1); otherwise under .data/.
const SCREENSHOTS = resolve(
  import.meta.dir,
  process.env.UPDATE_SCREENSHOTS ? "../../../docs/screenshots" : "../../../.data/screenshots",
);

beforeAll(async () => {
  m = await startMarketplace();
  chromium = await launchChromium({ hosts: { [PUBLIC_HOST]: "127.0.0.1" } });
  noJs = await chromium.newContext({ javaScriptEnabled: false });
  withJs = await chromium.newContext();
  mkdirSync(SCREENSHOTS, { recursive: true });
}, 240_000);
afterAll(async () => {
  await chromium?.close();
  await m?.stop();
}, 60_000);

const leadsFor = async (listingId: number) =>
  (await m.api
    .sql`SELECT id, buyer_name FROM leads WHERE listing_id = ${listingId} ORDER BY created_at`) as unknown as {
    id: string;
    buyer_name: string;
  }[];
const officeTotal = async () =>
  (await m.partner.get(`/partner/v1/offices/${m.partner.officeId}/leads/count`)).body.totalLeads as number;
const bodyText = (page: Page) => page.locator("body").innerText();

async function eventually<T>(
  what: string,
  read: () => Promise<T>,
  accept: (v: T) => boolean,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${timeoutMs} ms`);
    await Bun.sleep(100);
  }
}

async function open(context: BrowserContext, path: string): Promise<{ page: Page; status: number }> {
  const page = await context.newPage();
  const res = await page.goto(path.startsWith("http") ? path : `${m.base}${path}`);
  return { page, status: res!.status() };
}

/** Submits the page's form with a click and returns the status of the page it lands on. */
async function submit(page: Page, button: string): Promise<number> {
  const [res] = await Promise.all([
    page.waitForNavigation(),
    page.getByRole("button", { name: button, exact: true }).click(),
  ]);
  return res!.status();
}

async function fillInquiry(page: Page, v: { name?: string; email?: string; phone?: string; message?: string }) {
  if (v.name !== undefined) await page.getByLabel("Your name").fill(v.name);
  if (v.email !== undefined) await page.getByLabel("Your e-mail address").fill(v.email);
  if (v.phone !== undefined) await page.getByLabel("Your phone number (optional)").fill(v.phone);
  if (v.message !== undefined) await page.getByLabel("Your message").fill(v.message);
}

describe("a buyer, without JavaScript", () => {
  test("searches, opens a listing and sends an inquiry: the lead is counted for the broker's office and e-mailed once", async () => {
    const before = await officeTotal();
    const { page, status } = await open(noJs, "/");
    expect(status).toBe(200);
    await page.getByLabel("Search words").fill("bakery");
    expect(await submit(page, "Search")).toBe(200);
    expect(new URL(page.url()).pathname).toBe("/listings");
    expect(new URL(page.url()).searchParams.get("q")).toBe("bakery");

    // Cards: first ready photo, asking price, location as visibility allows, the under-contract badge where due.
    const titles = await page.locator(".cards h3").allInnerTexts();
    expect(titles).toEqual(expect.arrayContaining([m.bakery.title, m.salem.title, "Wholesale bread bakery"]));
    expect(titles.join(" ")).not.toContain(m.hiddenMarker);
    const card = page.locator(".cards > li", { has: page.getByRole("link", { name: m.bakery.title }) });
    expect(await card.innerText()).toContain("Asking $385,000");
    expect(await card.innerText()).toContain("Bakery · Portland, OR");
    expect(await card.locator("img").getAttribute("src")).toStartWith(`${m.base}/media/`);
    expect(await card.locator("img").getAttribute("alt")).toBe(`Photo of ${m.bakery.title}`);
    const salemCard = page.locator(".cards > li", { has: page.getByRole("link", { name: m.salem.title }) });
    expect(await salemCard.innerText()).toContain("Bakery · OR");
    expect(await salemCard.innerText()).not.toContain("Salem");

    await Promise.all([page.waitForURL(m.bakery.url), page.getByRole("link", { name: m.bakery.title }).click()]);
    expect(await page.locator("h1").innerText()).toBe(m.bakery.title);

    // The gallery: processed variants only, a srcset, the first photo loaded at once and the rest lazily, alt text.
    const photos = page.locator(".gallery img");
    expect(await photos.count()).toBe(3);
    for (let i = 0; i < 3; i++) {
      const img = photos.nth(i);
      expect(await img.getAttribute("alt")).toBe(`Photo ${i + 1} of 3: ${m.bakery.title}`);
      expect(await img.getAttribute("loading")).toBe(i === 0 ? "eager" : "lazy");
      expect(await img.getAttribute("srcset")).toMatch(
        new RegExp(`^${m.base}/media/[0-9a-f]{64}\\.jpg 400w, .+ 800w, .+ 1600w$`),
      );
    }
    expect(await page.locator(".gallery source[type='image/webp']").count()).toBe(3);

    await fillInquiry(page, {
      name: "Ann Buyer",
      email: "ann.buyer@example.com",
      phone: "+1 503 555 0199",
      message: "Is the lease renewable?\nWe could close within 60 days.",
    });
    expect(await submit(page, "Send inquiry")).toBe(200);
    expect(page.url()).toBe(`${m.bakery.url}/inquiry/sent#content`);
    expect(await page.locator("h1").innerText()).toBe("Thank you, your inquiry has been sent");
    expect(await bodyText(page)).toContain("Maria Alvarez");

    const [lead] = await leadsFor(m.bakery.id);
    expect(lead?.buyer_name).toBe("Ann Buyer");
    const mail = await m.sink.waitFor(leadMessageId(lead!.id), 30_000);
    expect(mail.envelopeTo).toEqual([m.broker.forwardingEmail]);
    expect(mail.headers["reply-to"]).toBe("Ann Buyer <ann.buyer@example.com>");
    expect(mail.text).toContain("Is the lease renewable?\nWe could close within 60 days.");
    expect(await eventually("office lead count", officeTotal, (n) => n === before + 1)).toBe(before + 1);

    // Reloading the confirmation (POST-redirect-GET) sends nothing again; the broker got exactly one e-mail.
    await page.reload();
    expect(await leadsFor(m.bakery.id)).toHaveLength(1);
    await eventually(
      "delivery recorded",
      async () => (await m.api.sql`SELECT delivery_state FROM leads WHERE id = ${lead!.id}`)[0]!.delivery_state,
      (s) => s === "sent",
    );
    expect(m.sink.received.filter((r) => r.envelopeTo.includes(m.broker.forwardingEmail))).toHaveLength(1);
    expect(await officeTotal()).toBe(before + 1);
    await page.close();
  }, 90_000);

  test("filters, sorts and pages through results", async () => {
    const { page } = await open(noJs, "/listings");
    // Fourteen live listings in this run's index: twelve cards, then the next page.
    expect(await page.locator("#results-heading").innerText()).toBe("14 businesses for sale");
    expect(await page.locator(".cards > li").count()).toBe(12);
    await Promise.all([page.waitForNavigation(), page.getByRole("link", { name: "Next page →" }).click()]);
    expect(await page.locator(".cards > li").count()).toBe(2);
    expect(await page.locator(".pager").innerText()).toContain("Page 2 of 2");
    await Promise.all([page.waitForNavigation(), page.getByRole("link", { name: "← Previous page" }).click()]);
    expect(await page.locator(".cards > li").count()).toBe(12);

    // The filter panel opens without JavaScript (details/summary); the drop-downs offer what is on the market,
    // each with how many listings it holds (issue 41: the counts).
    await page.locator("summary", { hasText: "Filters and sorting" }).click();
    const types = await page.locator("#businessType option").allInnerTexts();
    expect(types.map((t) => t.replace(/ \(\d+\)$/, ""))).toEqual(
      expect.arrayContaining(["Any type", "Bakery", "Coffee Shop", "Florist"]),
    );
    expect(types.slice(1).every((t) => / \(\d+\)$/.test(t))).toBe(true);
    await page.getByLabel("Under contract").selectOption("true");
    expect(await submit(page, "Apply filters")).toBe(200);
    expect(await page.locator(".cards h3").allInnerTexts()).toEqual([m.roastery.title]);
    expect(await page.locator(".cards .badge").allInnerTexts()).toEqual(["Under contract"]);

    const titles = async (query: string) => {
      await page.goto(`${m.base}/listings?${query}`);
      return page.locator(".cards h3").allInnerTexts();
    };
    expect(await titles("businessType=bakery&state=OR&sort=price_asc")).toEqual([m.salem.title, m.bakery.title]);
    expect((await titles("businessType=Bakery&financingAvailable=true")).sort()).toEqual(
      [m.bakery.title, "Wholesale bread bakery"].sort(),
    );
    expect(await titles("city=Portland&businessType=Bakery")).toEqual([m.bakery.title]);
    // Amounts as people type them ("$715,000").
    expect(await titles("minRevenue=%24715%2C000&maxRevenue=725000")).toEqual([m.bakery.title]);
    expect(await titles("minSde=200000&underContract=false&sort=price_desc")).toEqual([
      "Craft brewery and taproom",
      "Wholesale bread bakery",
      "Thai restaurant near the waterfront",
    ]);
    expect(await titles("minPrice=300000&maxPrice=400000&businessType=bakery")).toEqual([m.bakery.title]);
    await page.close();
  }, 60_000);

  test("bad search input is shown beside its field with status 400", async () => {
    const { page, status } = await open(noJs, "/listings?q=bakery&minPrice=cheap&minSde=9&maxSde=1");
    expect(status).toBe(400);
    expect(await page.locator("#minPrice-error").innerText()).toBe("Enter an amount in dollars, e.g. 250000.");
    expect(await page.locator("#minPrice").getAttribute("aria-invalid")).toBe("true");
    expect(await page.locator("#minPrice").inputValue()).toBe("cheap");
    expect(await page.locator("#minSde-error").innerText()).toBe(
      "The lowest seller's discretionary earnings must not be above the highest.",
    );
    expect(await page.locator(".error-summary li").allInnerTexts()).toEqual([
      "Asking price from: Enter an amount in dollars, e.g. 250000.",
      "SDE from: The lowest seller's discretionary earnings must not be above the highest.",
    ]);
    expect(await page.locator(".cards").count()).toBe(0);
    await page.close();
  }, 30_000);
});

describe("the inquiry form", () => {
  test("shows each problem beside its field, keeps what was typed and stores nothing; corrected, it is sent", async () => {
    const before = (await leadsFor(m.salem.id)).length;
    const { page } = await open(withJs, m.salem.url);
    await fillInquiry(page, { name: "  ", email: "ann@", phone: "call me", message: "" });
    expect(await submit(page, "Send inquiry")).toBe(400);
    expect(new URL(page.url()).hash).toBe("#inquiry");
    const errors = {
      name: await page.locator("#inquiry-name-error").innerText(),
      email: await page.locator("#inquiry-email-error").innerText(),
      phone: await page.locator("#inquiry-phone-error").innerText(),
      message: await page.locator("#inquiry-message-error").innerText(),
    };
    expect(errors).toEqual({
      name: "Enter your name.",
      email: "Enter an e-mail address like name@example.com.",
      phone: "Enter a phone number in digits, e.g. +1 512 555 0100, or leave it empty.",
      message: "Write a message for the broker.",
    });
    for (const f of ["name", "email", "phone", "message"]) {
      expect(await page.locator(`#inquiry-${f}`).getAttribute("aria-invalid")).toBe("true");
      expect(await page.locator(`#inquiry-${f}`).getAttribute("aria-describedby")).toContain(`inquiry-${f}-error`);
    }
    expect(await page.locator("#inquiry-email").inputValue()).toBe("ann@");
    expect(await page.locator("#inquiry-phone").inputValue()).toBe("call me");
    expect(await leadsFor(m.salem.id)).toHaveLength(before);

    // A message over the limit (the browser's maxlength is bypassed, as a bot would).
    await page.locator("#inquiry-message").evaluate((el) => el.removeAttribute("maxlength"));
    await fillInquiry(page, { name: "Bo Buyer", email: "bo@example.com", phone: "", message: "x".repeat(5001) });
    expect(await submit(page, "Send inquiry")).toBe(400);
    expect(await page.locator("#inquiry-message-error").innerText()).toBe("Use at most 5,000 characters.");
    expect(await page.locator("#inquiry-name-error").count()).toBe(0);
    expect(await leadsFor(m.salem.id)).toHaveLength(before);

    await fillInquiry(page, { message: "Still available?" });
    expect(await submit(page, "Send inquiry")).toBe(200);
    expect(page.url()).toBe(`${m.salem.url}/inquiry/sent#content`);
    expect((await leadsFor(m.salem.id)).map((l) => l.buyer_name)).toEqual([
      ...Array(before).fill(expect.any(String)),
      "Bo Buyer",
    ]);
    await page.close();
  }, 60_000);

  test("a filled honeypot looks like success to the bot, and nothing is stored", async () => {
    const before = (await leadsFor(m.roastery.id)).length;
    const { page } = await open(withJs, m.roastery.url);
    await fillInquiry(page, { name: "Bot", email: "bot@example.com", message: "Buy links" });
    await page.locator("#inquiry-website").fill("https://spam.example.com");
    expect(await submit(page, "Send inquiry")).toBe(200);
    expect(page.url()).toBe(`${m.roastery.url}/inquiry/sent#content`);
    expect(await leadsFor(m.roastery.id)).toHaveLength(before);
    await page.close();
  }, 30_000);

  test("a form posted from another site is refused and stores nothing", async () => {
    const before = (await leadsFor(m.roastery.id)).length;
    const form = new URLSearchParams({ name: "Eve", email: "eve@example.com", message: "Hello" }).toString();
    const attempts: Record<string, string>[] = [
      { origin: "https://evil.example" },
      { "sec-fetch-site": "cross-site" },
      { origin: "null" },
    ];
    for (const headers of attempts) {
      const res = await call(m.api.marketplaceUrl, "POST", `/listings/${m.roastery.id}/inquiry`, {
        body: form,
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      });
      expect({ headers, status: res.status }).toEqual({ headers, status: 403 });
      expect(res.body).toContain("Inquiry not sent");
    }
    expect(await leadsFor(m.roastery.id)).toHaveLength(before);
  });
});

describe("listings buyers must not see", () => {
  test("are never in search (page or JSON), the sitemap, the broker's page or any other page", async () => {
    const marker = m.hiddenMarker;
    const json = await call(m.api.marketplaceUrl, "GET", `/v1/listings?q=${marker}`);
    expect([json.status, json.body.total]).toEqual([200, 0]);
    const hiddenIds = [m.sold.id, m.archived.id, m.draft.id];

    const { page: search } = await open(withJs, `/listings?q=${marker}`);
    expect(await search.locator("#results-heading").innerText()).toBe(`0 businesses for sale matching “${marker}”`);
    expect(await search.locator(".cards").count()).toBe(0);
    await search.close();

    const pages: [string, number][] = [
      ["/listings?q=bakery", 200],
      ["/listings?businessType=Bakery&state=OR", 200],
      ["/", 200],
      [m.broker.url, 200],
      [m.bakery.url, 200],
      [m.sold.url, 410],
      [m.archived.url, 410],
      [m.draft.url, 404],
    ];
    for (const [url, status] of pages) {
      const { page, status: got } = await open(withJs, url);
      const html = await page.content();
      // A hidden listing's own page names its own URL (canonical, og:url); no page links to one.
      const links = hiddenIds.some((id) => url !== `${m.base}/listings/${id}` && html.includes(`/listings/${id}"`));
      expect({ url, status: got, leaks: html.includes(marker) || links }).toEqual({ url, status, leaks: false });
      await page.close();
    }
    for (const id of hiddenIds)
      expect((await call(m.api.marketplaceUrl, "GET", `/v1/listings/${id}`)).status).toBe(404);

    // The sitemap: one file while the database holds fewer public records than a file may list; an index with
    // numbered files beyond (a developer's database after benchmarks), whose files are read then.
    const sitemap = await (await fetch(`${m.api.marketplaceUrl}/sitemap.xml`)).text();
    const locs = (xml: string) => [...xml.matchAll(/<loc>([^<]+)<\/loc>/g)].map((x) => x[1]!);
    const live = [m.bakery, m.roastery, m.salem, ...m.fillers].map((l) => l.url);
    const served: string[] = [];
    if (sitemap.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<urlset')) served.push(...locs(sitemap));
    else {
      expect(sitemap).toStartWith('<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex');
      const files = locs(sitemap);
      expect(files.length).toBeGreaterThan(1);
      for (const file of files)
        served.push(...locs(await (await fetch(`${m.api.marketplaceUrl}${new URL(file).pathname}`)).text()));
      expect(served.length).toBeGreaterThan(SITEMAP_MAX_URLS);
    }
    expect(served).toEqual(expect.arrayContaining([...live, m.broker.url]));
    for (const id of hiddenIds) expect(served).not.toContain(`${m.base}/listings/${id}`);

    const [{ n }] = (await m.api
      .sql`SELECT (SELECT count(*) FROM listings) + (SELECT count(*) FROM brokers) AS n`) as unknown as [{ n: string }];
    const paged = createSitemaps({
      sql: m.api.sql,
      publicBaseUrl: m.base,
      pageSize: Math.max(1, Math.ceil(Number(n) / 3)),
    });
    const index = await (await paged.index()).text();
    expect(index).toContain("<sitemapindex");
    const files = locs(index);
    expect(files.length).toBeGreaterThan(2);
    const all: string[] = [];
    for (const file of files)
      all.push(...locs(await (await paged.file(file.slice(`${m.base}/sitemaps/`.length)))!.text()));
    expect(all).toEqual(expect.arrayContaining([...live, m.broker.url]));
    for (const id of hiddenIds) expect(all).not.toContain(`${m.base}/listings/${id}`);
    expect(new Set(all).size).toBe(all.length);
    expect(await paged.file(`listings-${files.length + 5}.xml`)).toBeNull();

    // An inquiry for a sold listing, through the form: the 410 page, and nothing stored.
    const res = await call(m.api.marketplaceUrl, "POST", `/listings/${m.sold.id}/inquiry`, {
      body: "name=A&email=a%40example.com&message=Hi",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(410);
    expect(await leadsFor(m.sold.id)).toHaveLength(0);
  }, 90_000);

  test("a sold or archived listing answers 410 with a friendly page linking to similar live listings", async () => {
    const { page, status } = await open(noJs, m.sold.url);
    expect(status).toBe(410);
    expect(await page.locator("h1").innerText()).toBe("This business is no longer for sale");
    expect(await page.locator('meta[name="robots"]').getAttribute("content")).toBe("noindex");
    const similar = await page.locator(".cards h3").allInnerTexts();
    expect(similar.length).toBeGreaterThan(0);
    expect(similar.length).toBeLessThanOrEqual(4);
    // Same business type and state first.
    expect(similar.slice(0, 2)).toEqual(expect.arrayContaining([m.bakery.title]));
    const more = page.getByRole("link", { name: "All Bakery businesses for sale in OR" });
    expect(await more.getAttribute("href")).toBe("/listings?businessType=Bakery&state=OR");
    await page.close();
  }, 30_000);
});

describe("search engines and link previews", () => {
  test("robots.txt points at the sitemap and keeps crawlers out of the APIs and the form", async () => {
    const res = await fetch(`${m.api.marketplaceUrl}/robots.txt`);
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    const text = await res.text();
    expect(text).toContain(`Sitemap: ${m.base}/sitemap.xml`);
    for (const line of ["Disallow: /v1/", "Disallow: /partner/", "Disallow: /listings/*/inquiry"])
      expect(text).toContain(line);
  });

  test("a listing carries its canonical URL, Open Graph tags and schema.org JSON-LD within the strict CSP", async () => {
    const page = await withJs.newPage();
    const csp: string[] = [];
    page.on("console", (msg) => {
      if (/Content Security Policy/i.test(msg.text())) csp.push(msg.text());
    });
    const res = await page.goto(m.bakery.url);
    expect(res!.headers()["content-security-policy"]).toStartWith("default-src 'none';");
    expect(res!.headers()["content-security-policy"]).not.toContain("script-src");
    expect(await page.locator('link[rel="canonical"]').getAttribute("href")).toBe(m.bakery.url);
    expect(await page.locator('meta[property="og:url"]').getAttribute("content")).toBe(m.bakery.url);
    expect(await page.locator('meta[property="og:type"]').getAttribute("content")).toBe("product");
    expect(await page.locator('meta[property="og:image"]').getAttribute("content")).toMatch(
      /\/media\/[0-9a-f]{64}\.jpg$/,
    );
    const ld = JSON.parse((await page.locator('script[type="application/ld+json"]').textContent())!);
    expect(ld).toMatchObject({
      "@context": "https://schema.org",
      "@type": "Product",
      name: m.bakery.title,
      url: m.bakery.url,
      category: "Bakery",
      offers: {
        "@type": "Offer",
        price: 385000,
        priceCurrency: "USD",
        availability: "https://schema.org/InStock",
        seller: { name: "Maria Alvarez", url: m.broker.url },
      },
    });
    // SHOW_CITY_STATE: the street and postal code are not in the data either.
    expect(ld.offers.availableAtOrFrom.address).toEqual({
      "@type": "PostalAddress",
      addressLocality: "Portland",
      addressRegion: "OR",
      addressCountry: "US",
    });
    expect(ld.image).toHaveLength(3);
    expect(csp).toEqual([]);
    await page.close();
  }, 30_000);

  test("a title with </script> cannot end the JSON-LD block or run", async () => {
    const title = `Café </script><script>document.title="pwned"</script> <!-- & "Bakery"`;
    const res = await m.partner.put(`/partner/v1/listings/${m.hiddenMarker}-script`, {
      ...(await brokerRef()),
      status: "FOR_SALE",
      businessType: "Bakery",
      title,
      location: { city: "Portland", state: "OR", country: "US", visibility: "SHOW_CITY_STATE" },
    });
    expect(res.status).toBe(201);
    const page = await withJs.newPage();
    await page.goto(res.body.serviceListingUrl);
    expect(await page.title()).toBe(`${title} – Bakery for sale in Portland, OR`);
    expect(await page.locator("script").count()).toBe(1);
    expect(JSON.parse((await page.locator('script[type="application/ld+json"]').textContent())!).name).toBe(title);
    await page.close();
    // Keep the listing out of the other tests' way (and of the screenshots).
    await m.partner.put(`/partner/v1/listings/${m.hiddenMarker}-script`, { status: "ARCHIVED" });
    await indexedState(m.api.sql, res.body.serviceListingId, 30_000);
  }, 30_000);

  test("a page that does not exist is an HTML page for browsers and JSON for the APIs", async () => {
    const { page, status } = await open(noJs, "/no-such-page");
    expect(status).toBe(404);
    expect(await page.locator("h1").innerText()).toBe("Page not found");
    await page.close();
    const api = await call(m.api.marketplaceUrl, "GET", "/v1/no-such-thing", { headers: { accept: "text/html" } });
    expect([api.status, api.body]).toEqual([404, { status: "error", error: "Not found" }]);
  });
});

async function brokerRef() {
  const [row] = await m.api.sql`SELECT external_id FROM brokers WHERE id = ${m.broker.id}`;
  return { brokerExternalId: row!.external_id as string };
}

describe("every page type", () => {
  /** Opens a page type in `page`; returns the status it answered with. */
  const PAGE_TYPES: [string, (page: Page) => Promise<number>][] = [
    ["home", async (p) => (await p.goto(`${m.base}/`))!.status()],
    ["search", async (p) => (await p.goto(`${m.base}/listings?q=bakery&state=OR`))!.status()],
    ["search-errors", async (p) => (await p.goto(`${m.base}/listings?minPrice=cheap&maxPrice=10`))!.status()],
    ["listing", async (p) => (await p.goto(m.bakery.url))!.status()],
    [
      "inquiry-errors",
      async (p) => {
        await p.goto(m.bakery.url);
        await fillInquiry(p, { name: "Ann", email: "not-an-e-mail", message: "" });
        return submit(p, "Send inquiry");
      },
    ],
    ["inquiry-sent", async (p) => (await p.goto(`${m.bakery.url}/inquiry/sent`))!.status()],
    ["broker", async (p) => (await p.goto(m.broker.url))!.status()],
    ["gone", async (p) => (await p.goto(m.sold.url))!.status()],
    ["not-found", async (p) => (await p.goto(`${m.base}/listings/999999999999`))!.status()],
  ];
  const EXPECTED_STATUS: Record<string, number> = {
    "search-errors": 400,
    "inquiry-errors": 400,
    gone: 410,
    "not-found": 404,
  };

  test("the accessibility check itself finds violations where there are some", async () => {
    const page = await withJs.newPage();
    await page.setContent(`<html><body><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="><input></body></html>`);
    const ids = (await axeViolations(page)).map((v) => v.id);
    expect(ids).toEqual(expect.arrayContaining(["image-alt", "html-has-lang", "label"]));
    await page.close();
  });

  for (const [width, viewport] of [
    ["desktop", DESKTOP],
    ["phone", PHONE],
  ] as const) {
    test(`at ${width} width: axe finds no serious or critical violation, nothing is wider than the screen; screenshots saved`, async () => {
      const context = await chromium.newContext({ viewport });
      const page = await context.newPage();
      const problems: unknown[] = [];
      for (const [name, openPage] of PAGE_TYPES) {
        const status = await openPage(page);
        expect({ name, status }).toEqual({ name, status: EXPECTED_STATUS[name] ?? 200 });
        const serious = (await axeViolations(page)).filter((v) => v.impact === "serious" || v.impact === "critical");
        if (serious.length) problems.push({ page: name, width, serious });
        const overflow = (await page.evaluate("document.documentElement.scrollWidth")) as number;
        if (overflow > viewport.width) problems.push({ page: name, width, scrollWidth: overflow });
        await page.screenshot({ path: `${SCREENSHOTS}/${name}-${width}.jpg`, type: "jpeg", quality: 55 });
      }
      expect(problems).toEqual([]);
      // A phone can reach and use the form: its fields are as wide as the screen allows, never cut off.
      if (viewport === PHONE) {
        await page.goto(m.bakery.url);
        const box = await page.getByLabel("Your message").boundingBox();
        expect(box!.x).toBeGreaterThanOrEqual(0);
        expect(box!.x + box!.width).toBeLessThanOrEqual(PHONE.width);
        expect(box!.width).toBeGreaterThan(PHONE.width * 0.75);
      }
      await context.close();
    }, 120_000);
  }
});

describe("abuse limits", () => {
  test("the form shares the JSON intake's limits: over the per-address limit it answers 429 with a clear notice", async () => {
    await withinOneRateWindow(3600);
    // Use up this address's allowance through the JSON API...
    let limited = false;
    for (let i = 0; i < 20 && !limited; i++) {
      const res = await call(m.api.marketplaceUrl, "POST", `/v1/listings/${m.roastery.id}/leads`, {
        body: { name: "Filler", email: "f@example.com", message: "Hi" },
      });
      limited = res.status === 429;
    }
    expect(limited).toBe(true);
    // ...then the form from the same address is refused too, with what was typed kept.
    const before = (await leadsFor(m.bakery.id)).length;
    const { page } = await open(noJs, m.bakery.url);
    await fillInquiry(page, { name: "Late Buyer", email: "late@example.com", message: "Still for sale?" });
    expect(await submit(page, "Send inquiry")).toBe(429);
    expect(await page.locator(".inquiry .error-summary").innerText()).toMatch(
      /^Your inquiry was not sent: too many inquiries came from your network recently\. Please try again in about \d+ minutes?\.$/,
    );
    expect(await page.getByLabel("Your name").inputValue()).toBe("Late Buyer");
    expect(await leadsFor(m.bakery.id)).toHaveLength(before);
    await page.close();
  }, 60_000);
});
