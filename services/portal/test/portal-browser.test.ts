// The partner portal in a real Chromium (Debian's, driven by playwright-core), against the real API (relay on), the
// webhooks service (its report tracker keeps the listings' summaries; it delivers to a receiver on loopback) and an
// SMTP sink: a person is invited, finds the e-mail, signs in by link; sees a listing's warning with its fix, and
// green once the partner fixes it through the API; a person without lead access finds no lead data on any page; a
// forged form is refused; an expired link gets a clear page. axe-core checks every page, and every page is
// photographed (under .data/screenshots/portal; the overview and a listing into docs/screenshots with
// UPDATE_SCREENSHOTS=1).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { axeViolations, launchChromium, type ChromiumSession } from "../../marketplace/test/support/browser.ts";
import { call, sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import { startReceiver, type Receiver } from "../../webhooks/test/support/receiver.ts";
import { startWebhooks, type WebhooksHarness } from "../../webhooks/test/support/webhooks-harness.ts";
import { uniqueName } from "../../../test/support/env.ts";
import { inviteTwo, signInLinkIn, startPortal, type PortalHarness } from "./support/portal-harness.ts";

/** The names the browser uses (mapped to loopback): the portal, and another page of the same site. */
const PORTAL_HOST = "portal.example.test";
const EVIL_HOST = "prizes.example.test";
const SCREENSHOTS = resolve(import.meta.dir, "../../../.data/screenshots/portal");
const DOCS_SCREENSHOTS = resolve(import.meta.dir, "../../../docs/screenshots");

let api: ApiHarness;
let portal: PortalHarness;
let webhooks: WebhooksHarness;
let receiver: Receiver;
let partner: Partner;
/** The portal's origin as the browser opens it. */
let base = "";
let chromium: ChromiumSession;
let lead: BrowserContext;
let noLead: BrowserContext;
const brokerId = uniqueName("broker");
const listingId = uniqueName("bakery");
let leadEmail = "";
let noLeadEmail = "";

async function eventually<T>(what: string, read: () => Promise<T>, accept: (v: T) => boolean, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${timeoutMs} ms`);
    await Bun.sleep(100);
  }
}

/** Clicks a button and waits for the page it leads to; its status. */
async function submit(page: Page, button: string): Promise<number> {
  const [res] = await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: button }).click()]);
  return res!.status();
}

/** The whole sign-in in the browser: the sign-in page (from the invitation's link), the form, the e-mailed link. */
async function signIn(context: BrowserContext, email: string): Promise<Page> {
  const invitation = await portal.mailTo(email, /invited you to its partner portal/);
  const signInPage = /(http\S+\/portal\/sign-in\?email=\S+)/.exec(invitation.text!)![1]!;
  const page = await context.newPage();
  expect((await page.goto(signInPage))!.status()).toBe(200);
  expect(await page.getByLabel("E-mail address").inputValue()).toBe(email);
  const before = portal.sink.received.length;
  expect(await submit(page, "Send me a sign-in link")).toBe(200);
  expect(await page.locator("h1").innerText()).toBe("Check your e-mail");
  const mail = await eventually(
    "the sign-in e-mail",
    async () =>
      portal.sink.received
        .slice(before)
        .find((m) => m.envelopeTo.includes(email) && /sign-in link/.test(m.headers.subject!)),
    (m) => m !== undefined,
    15_000,
  );
  const landed = await page.goto(signInLinkIn(mail!));
  expect(landed!.status()).toBe(200);
  expect(new URL(page.url()).pathname).toBe("/portal/live");
  return page;
}

beforeAll(async () => {
  receiver = startReceiver();
  api = await startApi({ requestLog: true });
  partner = await api.createPartner({ leadTracking: true, test: true });
  [portal, webhooks] = await Promise.all([
    startPortal({ publicBaseUrl: api.baseUrl, host: PORTAL_HOST }),
    startWebhooks({ allowedHosts: [receiver.hostPort], publicBaseUrl: api.baseUrl, partners: [partner.partnerId] }),
  ]);
  base = new URL(portal.portalUrl).origin;
  chromium = await launchChromium({ hosts: { [PORTAL_HOST]: "127.0.0.1", [EVIL_HOST]: "127.0.0.1" } });
  lead = await chromium.newContext();
  noLead = await chromium.newContext();
  mkdirSync(SCREENSHOTS, { recursive: true });

  expect((await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
  // A listing a buyer would miss the price of: the ASKING_PRICE_MISSING warning.
  const put = await partner.put(
    `/partner/v1/listings/${listingId}`,
    sample.listing(brokerId, {
      title: "Corner bakery with wholesale accounts",
      description:
        "A neighbourhood bakery of twenty years with six wholesale accounts, a trained team of five and a lease with ten years to run; the owners retire.",
      financials: { revenue: 620000, sde: 140000 },
      photos: [1, 2, 3, 4, 5].map((i) => ({ url: `https://images.example.com/bakery-${i}.jpg`, sortKey: i })),
    }),
  );
  expect(put.status).toBe(201);
  // Its one warning (the photos wait for processing, which would say more only if one failed).
  expect(put.body.warnings.map((w: { code: string }) => w.code)).toEqual(["ASKING_PRICE_MISSING"]);
  // A few more, of every status and quality, so the overview has something to show (and to photograph).
  const statuses = ["FOR_SALE", "FOR_SALE", "UNDER_CONTRACT", "PENDING_CONTRACT", "SOLD", "DRAFT", "ARCHIVED"];
  const batch = await call(api.baseUrl, "POST", "/partner/v1/listings/batch", {
    key: partner.apiKey,
    body: {
      items: statuses.map((status, i) => ({
        externalListingId: uniqueName(`more-${i}`),
        listing: sample.listing(brokerId, {
          status,
          title: i % 3 === 0 ? null : `Business ${i} for sale`,
          financials: i % 2 === 0 ? { revenue: 500000 } : { askingPrice: 250000 + i * 10000, revenue: 600000 },
        }),
      })),
    },
  });
  expect(batch.status).toBe(200);
  ({ lead: leadEmail, noLead: noLeadEmail } = await inviteTwo(api.baseUrl, partner.apiKey, "browser"));
}, 180_000);

afterAll(async () => {
  await chromium?.close();
  await Promise.allSettled([webhooks?.stop(), portal?.stop()]);
  receiver?.stop();
  await api?.stop();
}, 60_000);

describe("the partner portal in a browser", () => {
  test("an invited person signs in by the e-mailed link, sees the listing's warning with its fix, and green once fixed", async () => {
    const page = await signIn(lead, leadEmail);
    expect(await page.locator("h1").innerText()).toBe("Overview");

    // The report tracker has summarized the listing: it is in the list, filtered by its warning.
    await eventually(
      "the listing in the warning's filter",
      async () => {
        await page.goto(`${base}/portal/live/listings?warning=ASKING_PRICE_MISSING`);
        return page.getByRole("link", { name: "Corner bakery with wholesale accounts" }).count();
      },
      (n) => n === 1,
    );
    await Promise.all([
      page.waitForNavigation(),
      page.getByRole("link", { name: "Corner bakery with wholesale accounts" }).click(),
    ]);
    const quality = page.locator("section[aria-labelledby=quality]");
    expect(await quality.innerText()).toContain("ASKING_PRICE_MISSING");
    expect(await quality.innerText()).toContain("How to fix: Send financials.askingPrice");
    expect(await page.locator("[data-quality=warnings]").count()).toBe(1);

    // The partner fixes it through the API; the page shows it green.
    expect(
      (await partner.put(`/partner/v1/listings/${listingId}`, { financials: { askingPrice: 385000 } })).status,
    ).toBe(200);
    await page.reload();
    const clean = page.locator("[data-quality=clean]");
    expect(await clean.innerText()).toContain("No warnings.");
    const green = await clean
      .locator("strong")
      .evaluate(
        (el) =>
          (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(el).color,
      );
    expect(green).toBe("rgb(27, 110, 58)");
    expect(await quality.innerText()).not.toContain("ASKING_PRICE_MISSING");
  }, 90_000);

  test("a person without lead access finds no lead data on any page", async () => {
    // Simulated inquiries on a test listing: the lead-access person sees them, the other does not.
    const testListing = uniqueName("test-bakery");
    expect((await partner.test!.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
    expect((await partner.test!.put(`/partner/v1/listings/${testListing}`, sample.listing(brokerId))).status).toBe(201);
    expect(
      (
        await call(api.baseUrl, "POST", `/partner/v1/test/listings/${testListing}/leads`, {
          key: partner.test!.apiKey,
          body: {},
        })
      ).status,
    ).toBe(202);
    const page = await signIn(noLead, noLeadEmail);
    const paths = [
      "/portal/live",
      "/portal/live/listings",
      `/portal/live/listings/${listingId}`,
      "/portal/live/brokers",
      `/portal/live/brokers/${brokerId}`,
      "/portal/live/requests",
      "/portal/live/webhooks",
      "/portal/test",
      `/portal/test/listings/${testListing}`,
      "/portal/account",
    ];
    for (const path of paths) {
      expect([path, (await page.goto(`${base}${path}`))!.status()]).toEqual([path, 200]);
      const text = await page.locator("body").innerText();
      expect([path, /Inquiries|inquiries per day|lead\.received|leads\/count/.test(text)]).toEqual([path, false]);
    }
    const withLeads = await lead.newPage();
    await withLeads.goto(`${base}/portal/test/listings/${testListing}`);
    expect(await withLeads.locator("body").innerText()).toContain("Views and inquiries, last 30 days");
  }, 90_000);

  test("a delivery that failed against a receiver answering 500 is resent from the portal once it recovers, and delivered", async () => {
    const endpointId = uniqueName("hooks");
    const path = `/hooks/${endpointId}`;
    receiver.script(path, () => ({ status: 500 }));
    expect(
      (
        await partner.put(`/partner/v1/webhook-endpoints/${endpointId}`, {
          url: receiver.url(path),
          events: ["listing.report.changed"],
        })
      ).status,
    ).toBe(201);
    const queued = await call(api.baseUrl, "POST", `/partner/v1/webhook-endpoints/${endpointId}/test`, {
      key: partner.apiKey,
    });
    const deliveryId = queued.body.deliveryId as string;
    await eventually(
      "the delivery to fail",
      async () => (await api.sql`SELECT status FROM webhook_deliveries WHERE id = ${deliveryId}::uuid`)[0]?.status,
      (s) => s === "failed",
    );
    const page = await lead.newPage();
    await page.goto(`${base}/portal/live/webhooks?endpoint=${endpointId}&status=failed`);
    const row = page.locator("tr", { has: page.getByRole("cell", { name: endpointId }) });
    expect(await row.innerText()).toContain("HTTP 500");
    // The receiver recovers; the person resends from the log.
    receiver.script(path, () => ({ status: 204 }));
    const [landed] = await Promise.all([
      page.waitForNavigation(),
      row.getByRole("button", { name: /^Resend/ }).click(),
    ]);
    expect(landed!.status()).toBe(200);
    expect(await page.getByRole("status").innerText()).toContain("queued again");
    await eventually(
      "the delivery to be delivered",
      async () => {
        await page.reload();
        return page.locator("main").innerText();
      },
      (text) => text.includes("HTTP 204") && /delivered/.test(text),
    );
    await page.screenshot({ path: `${SCREENSHOTS}/delivery-resent.jpg`, type: "jpeg", quality: 60, fullPage: true });
  }, 90_000);

  test("a forged form from another page, without the CSRF token, is refused and changes nothing", async () => {
    // The same site (example.test), another origin: the session cookie goes with the post, the token cannot.
    const evil = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () =>
        new Response(
          `<!doctype html><html lang="en"><title>Win a prize</title><form method="post" action="${base}/portal/sign-out-everywhere"><button>Claim</button></form></html>`,
          { headers: { "content-type": "text/html" } },
        ),
    });
    try {
      const page = await lead.newPage();
      await page.goto(`http://${EVIL_HOST}:${evil.port}/`);
      expect(await submit(page, "Claim")).toBe(403);
      expect(await page.locator("h1").innerText()).toBe("This form was not accepted");
      await page.screenshot({ path: `${SCREENSHOTS}/form-refused.jpg`, type: "jpeg", quality: 60 });
      // Still signed in.
      expect((await page.goto(`${base}/portal/live`))!.status()).toBe(200);
    } finally {
      evil.stop(true);
    }
  });

  test("an expired sign-in link is refused with a page that says so and offers a new one", async () => {
    const context = await chromium.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/portal/sign-in`);
    await page.getByLabel("E-mail address").fill(leadEmail);
    const before = portal.sink.received.length;
    await submit(page, "Send me a sign-in link");
    const mail = await eventually(
      "the sign-in e-mail",
      async () => portal.sink.received.slice(before).find((m) => m.envelopeTo.includes(leadEmail)),
      (m) => m !== undefined,
    );
    await portal.sql`UPDATE portal_sign_in_links SET expires_at = now() - interval '1 second' WHERE used_at IS NULL
      AND user_id = (SELECT id FROM portal_users WHERE email = ${leadEmail})`;
    const res = await page.goto(signInLinkIn(mail!));
    expect(res!.status()).toBe(410);
    expect(await page.locator("h1").innerText()).toBe("This sign-in link has expired");
    expect(await page.getByRole("link", { name: "Ask for a new sign-in link" }).count()).toBe(1);
    await page.screenshot({ path: `${SCREENSHOTS}/link-expired.jpg`, type: "jpeg", quality: 60 });
    await context.close();
  });

  test("axe-core finds no serious or critical violation on any page; every page is photographed", async () => {
    const signedOut = await chromium.newContext();
    const pages: [string, BrowserContext, string][] = [
      ["sign-in", signedOut, "/portal/sign-in"],
      ["overview", lead, "/portal/live"],
      ["listings", lead, "/portal/live/listings"],
      ["listing", lead, `/portal/live/listings/${listingId}`],
      ["brokers", lead, "/portal/live/brokers"],
      ["broker", lead, `/portal/live/brokers/${brokerId}`],
      ["requests", lead, "/portal/live/requests"],
      ["webhooks", lead, "/portal/live/webhooks"],
      ["test-overview", lead, "/portal/test"],
      ["account", lead, "/portal/account"],
    ];
    const problems: unknown[] = [];
    for (const [name, context, path] of pages) {
      for (const [width, viewport] of [
        ["desktop", { width: 1280, height: 900 }],
        ["phone", { width: 375, height: 812 }],
      ] as const) {
        const page = await context.newPage();
        await page.setViewportSize(viewport);
        expect([name, (await page.goto(`${base}${path}`))!.status()]).toEqual([name, 200]);
        // The page itself, not the sign-in page a lost session would lead to.
        expect([name, new URL(page.url()).pathname]).toEqual([name, path]);
        const serious = (await axeViolations(page)).filter((v) => v.impact === "serious" || v.impact === "critical");
        if (serious.length) problems.push({ page: name, width, serious });
        await page.screenshot({
          path: `${SCREENSHOTS}/${name}-${width}.jpg`,
          type: "jpeg",
          quality: 60,
          fullPage: width === "desktop",
        });
        if (process.env.UPDATE_SCREENSHOTS && width === "desktop" && (name === "overview" || name === "listing"))
          await page.screenshot({
            path: `${DOCS_SCREENSHOTS}/portal-${name}.jpg`,
            type: "jpeg",
            quality: 60,
            fullPage: true,
          });
        await page.close();
      }
    }
    await signedOut.close();
    expect(problems).toEqual([]);
  }, 120_000);
});
