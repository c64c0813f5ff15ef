// Issue 41: saved searches with e-mail alerts, end to end against the real servers: a buyer saves a search with an
// address; the confirmation (and nothing else) reaches a real SMTP sink through the leads service's mailer; the link
// confirms it; a partner publishes a matching listing; the daily digest names it; the one-click unsubscribe of RFC 8058
// (a POST to the List-Unsubscribe URL) removes the search and the address; nothing more is sent. Also: nobody can
// mail-bomb a stranger through the form, an address has at most N searches, and the form's mistakes are named.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Kafka, logLevel } from "kafkajs";
import { silentLogger } from "@pss/service-kit";
import { testUrls, uniqueName, withinOneRateWindow } from "../../../test/support/env.ts";
import {
  deleteSearchIndex,
  indexedState,
  startIndexer,
  until,
  type IndexerHarness,
} from "../../indexer/test/support/indexer-harness.ts";
import { createSmtpTransport } from "../../leads/src/forwarding/smtp-transport.ts";
import { createLeadsWorkers } from "../../leads/src/leads-workers.ts";
import { startSmtpSink, type ReceivedMail, type SmtpSink } from "../../leads/test/support/smtp-sink.ts";
import { sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import { startMarketplace, type MarketplaceHarness } from "./support/marketplace-harness.ts";

let api: ApiHarness;
let market: MarketplaceHarness;
let idx: IndexerHarness;
let sink: SmtpSink;
let workers: ReturnType<typeof createLeadsWorkers>;
let partner: Partner;
let brokerId: string;
const partners = new Set<string>();
const token = Math.random().toString(36).slice(2, 8);
const kind = `Bookshop ${token}`;
const BASE = "https://market.example.test";

beforeAll(async () => {
  idx = await startIndexer({ onlyPartners: partners });
  api = await startApi({ searchAlias: idx.alias });
  // Fast digests (every second, nothing held back for the index) and small limits, to reach them in a test.
  market = await startMarketplace(api, {
    searchAlias: idx.alias,
    trustProxy: true,
    savedSearches: { digestIntervalSeconds: 1, indexLagSeconds: 0, maxPerAddress: 2, perAddress: 6, perRecipient: 3 },
  });
  partner = await api.createPartner();
  partners.add(partner.partnerId);
  brokerId = uniqueName("broker");
  await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker());
  sink = await startSmtpSink();
  const from = "Marketplace <alerts@market.example.test>";
  workers = createLeadsWorkers({
    sql: api.sql,
    kafka: new Kafka({
      clientId: uniqueName("saved"),
      brokers: testUrls().KAFKA_BROKERS.split(","),
      logLevel: logLevel.NOTHING,
    }),
    logger: silentLogger,
    groupPrefix: uniqueName("saved-search-leads"),
    publicBaseUrl: BASE,
    mail: {
      transport: createSmtpTransport({
        host: "127.0.0.1",
        port: sink.port,
        secure: false,
        from,
        fromDomain: "market.example.test",
      }),
      from,
      messageIdDomain: "market.example.test",
    },
    policy: { maxAttempts: 3, retryBaseMs: 200, claimTimeoutMs: 60_000 },
    sweepIntervalMs: 60_000,
    firstAttemptGraceMs: 60_000,
    savedSearchMailPollMs: 100,
    partnerIds: () => [partner.partnerId],
  });
  await workers.start();
}, 120_000);

afterAll(async () => {
  await workers?.stop();
  await sink?.stop();
  await market?.stop();
  await idx?.stop();
  await api?.stop();
  await deleteSearchIndex(idx.alias);
});

/** The search page's save form, posted as a browser on this site does (from `client`, through our proxy). */
function saveSearch(
  email: string,
  query: Record<string, string>,
  client = "198.51.100.7",
  extra: Record<string, string> = {},
) {
  return fetch(`${market.baseUrl}/saved-searches`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": client, ...extra },
    body: new URLSearchParams({ ...query, email }),
  });
}

const mailsTo = (address: string) => sink.received.filter((m) => m.envelopeTo.includes(address));
const linkIn = (mail: ReceivedMail, path: string) =>
  new URL(new RegExp(`(${BASE.replace(/\./g, "\\.")}${path}\\?token=[A-Za-z0-9_-]+)`).exec(mail.text ?? "")![1]!);
const local = (url: URL) => `${market.baseUrl}${url.pathname}${url.search}`;

async function publish(overrides: Record<string, unknown> = {}): Promise<number> {
  const res = await partner.put(
    `/partner/v1/listings/${uniqueName("listing")}`,
    sample.listing(brokerId, {
      businessType: kind,
      title: `Neighbourhood bookshop ${token}`,
      location: { city: "Austin", state: "TX", postalCode: "78701", country: "US", visibility: "SHOW_FULL_ADDRESS" },
      ...overrides,
    }),
  );
  expect(res.status).toBe(201);
  await indexedState(api.sql, res.body.serviceListingId);
  await idx.opensearch.indices.refresh({ index: idx.alias });
  return res.body.serviceListingId;
}

test("save, confirm (double opt-in), a matching listing in the digest, one-click unsubscribe: the whole journey", async () => {
  const buyer = `${uniqueName("buyer")}@example.net`;
  const query = { businessType: kind, near: "Austin, TX", radius: "25" };
  const saved = await saveSearch(buyer, query);
  expect(saved.status).toBe(303);
  expect(saved.headers.get("location")).toBe("/saved-searches/sent");

  // The confirmation, and only it, with the RFC 8058 headers.
  const confirmation = await until("the confirmation e-mail", async () => mailsTo(buyer)[0]);
  expect(confirmation.headers.subject).toStartWith("Confirm your saved search:");
  expect(confirmation.headers.subject).toContain(kind);
  expect(confirmation.headers.subject).toContain("within 25 mi of Austin, TX");
  expect(confirmation.headers["list-unsubscribe-post"]).toBe("List-Unsubscribe=One-Click");
  const unsubscribeLink = new URL(/^<(.+)>$/.exec(confirmation.headers["list-unsubscribe"]!)![1]!);
  expect(unsubscribeLink.pathname).toBe("/saved-searches/unsubscribe");

  // A listing published before the confirmation is in no e-mail: nothing is sent before it.
  await publish({ title: `Before confirmation ${token}` });
  await market.savedSearches.runDigests();
  await Bun.sleep(1500);
  expect(mailsTo(buyer)).toHaveLength(1);

  // The link opens a page with a button (a link scanner confirms nothing); the button confirms.
  const confirm = linkIn(confirmation, "/saved-searches/confirm");
  const page = await fetch(local(confirm));
  expect(page.status).toBe(200);
  expect(await page.text()).toContain("Confirm the e-mail alerts");
  const done = await fetch(`${market.baseUrl}/saved-searches/confirm`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: confirm.searchParams.get("token")! }),
  });
  expect(done.status).toBe(200);
  expect(await done.text()).toContain("Your search is saved");
  // Used once: the link is spent.
  expect((await fetch(local(confirm))).status).toBe(404);

  // A partner publishes a matching listing, and one elsewhere: the digest names the first only.
  const matching = await publish({ title: `Corner bookshop ${token}`, financials: { askingPrice: 210_000 } });
  const elsewhere = await publish({
    title: `Portland bookshop ${token}`,
    location: { city: "Portland", state: "OR", country: "US", visibility: "SHOW_CITY_STATE" },
  });
  await Bun.sleep(1100); // the digest is due a second after the confirmation
  await market.savedSearches.runDigests();
  const digest = await until("the digest", async () =>
    mailsTo(buyer).find((m) => m.headers.subject?.includes("new or reduced")),
  );
  expect(digest.text).toContain(`${BASE}/listings/${matching}`);
  expect(digest.text).not.toContain(`/listings/${elsewhere}`);
  expect(digest.html).toContain(`${BASE}/listings/${matching}`);
  expect(digest.headers["list-unsubscribe"]).toBe(`<${unsubscribeLink}>`);
  expect(digest.headers["list-unsubscribe-post"]).toBe("List-Unsubscribe=One-Click");
  // Delivered mail is not kept (its row goes in the transaction after the relay's send, so it may trail the mail).
  await until("the delivered digest's row to be deleted", async () => {
    const [row] = await api.sql`SELECT count(*)::int AS n FROM saved_search_mail WHERE recipient = ${buyer}`;
    return row!.n === 0;
  });

  // RFC 8058: the mail client POSTs "List-Unsubscribe=One-Click" to the URL; that alone unsubscribes.
  const oneClick = await fetch(local(unsubscribeLink), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://mail.example.org" },
    body: "List-Unsubscribe=One-Click",
  });
  expect(oneClick.status).toBe(200);
  expect(await oneClick.text()).toContain("Unsubscribed");
  // The address went with its last search.
  expect(
    (
      await api.sql`SELECT count(*)::int AS n FROM saved_search_subscribers WHERE email_key = ${buyer.toLowerCase()}`
    )[0]!.n,
  ).toBe(0);
  const before = mailsTo(buyer).length;
  await publish({ title: `After unsubscribing ${token}` });
  await Bun.sleep(1100);
  await market.savedSearches.runDigests();
  await Bun.sleep(1000);
  expect(mailsTo(buyer)).toHaveLength(before);
  // A second one-click finds nothing, harmlessly.
  expect((await fetch(local(unsubscribeLink), { method: "POST", body: "List-Unsubscribe=One-Click" })).status).toBe(
    200,
  );
}, 120_000);

describe("no one can mail-bomb a stranger through the form", () => {
  test("confirmations per recipient are limited, whatever the client address; the form answers the same", async () => {
    const stranger = `${uniqueName("stranger")}@example.org`;
    const answers: string[] = [];
    for (let i = 0; i < 5; i++) {
      // Each time another search (another saved row) and another client address.
      const res = await saveSearch(stranger, { businessType: kind, state: `S${i}` }, `203.0.113.${i + 10}`);
      answers.push(`${res.status} ${res.headers.get("location")}`);
    }
    expect(new Set(answers)).toEqual(new Set(["303 /saved-searches/sent"]));
    await Bun.sleep(1500);
    // At most two saved searches per address: two confirmations; the third save's notice (full); then the
    // recipient's limit of three e-mails a day holds the rest back.
    const got = mailsTo(stranger);
    expect(got).toHaveLength(3);
    expect(got.map((m) => m.headers.subject).sort()).toEqual([
      expect.stringMatching(/^Confirm your saved search/),
      expect.stringMatching(/^Confirm your saved search/),
      "Your saved searches are full",
    ]);
  });

  test("saves per client address are limited (429 with Retry-After); another client is not", async () => {
    await withinOneRateWindow(3600);
    const client = `192.0.2.${Math.floor(Math.random() * 200) + 20}`;
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++)
      statuses.push((await saveSearch(`${uniqueName("many")}@example.com`, { businessType: kind }, client)).status);
    expect(statuses).toEqual([303, 303, 303, 303, 303, 303, 429]);
    const refused = await saveSearch(`${uniqueName("many")}@example.com`, { businessType: kind }, client);
    expect(refused.headers.get("retry-after")).not.toBeNull();
    expect(
      (await saveSearch(`${uniqueName("other")}@example.com`, { businessType: kind }, "198.51.100.99")).status,
    ).toBe(303);
  });

  test("a form from another site is refused; a bad address or search is named, and nothing is stored", async () => {
    const address = `${uniqueName("x")}@example.com`;
    expect(
      (await saveSearch(address, { businessType: kind }, "198.51.100.50", { origin: "https://evil.example" })).status,
    ).toBe(403);
    const bad = await saveSearch("not-an-address", { businessType: kind }, "198.51.100.51");
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("Enter an e-mail address like name@example.com.");
    const place = await saveSearch(address, { near: "Xyzzyville" }, "198.51.100.52");
    expect(place.status).toBe(400);
    expect(await place.text()).toContain("We do not know this place.");
    expect(
      (await api.sql`SELECT count(*)::int AS n FROM saved_search_subscribers WHERE email_key = ${address}`)[0]!.n,
    ).toBe(0);
  });
});

test("the search page offers the save form with the search's filters as hidden fields", async () => {
  const html = await (
    await fetch(`${market.baseUrl}/listings?businessType=${encodeURIComponent(kind)}&sbaPrequalified=true`)
  ).text();
  const form = /<form class="save-search"[\s\S]*?<\/form>/.exec(html)?.[0] ?? "";
  expect(form).toContain('action="/saved-searches"');
  expect(form).toContain(`<input type="hidden" name="businessType" value="${kind}">`);
  expect(form).toContain('<input type="hidden" name="sbaPrequalified" value="true">');
  expect(form).toContain('name="email" type="email"');
});
