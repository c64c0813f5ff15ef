// The canary: a FOR_SALE listing written with a test key, next to the same listing written with the live key,
// through the whole running system on real servers (API and outbox relay, Kafka, the indexer with an LLM
// rewriter, the media service, the leads workers with a real SMTP server). The test listing must never be
// found by buyer search (JSON or the search page), never be served on a public page, a broker's page, the
// sitemap or a 410 page's similar listings, no buyer's inquiry (JSON or the listing page's form) may reach it,
// and no e-mail may go out for its leads; its description never reaches the external model. Meanwhile
// everything the partner reads back behaves as live: photos processed, search-index state, history, events,
// lead counts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Kafka, logLevel } from "kafkajs";
import { rewriteDescription, Topics } from "@pss/contracts";
import { silentLogger } from "@pss/service-kit";
import { testUrls, uniqueName } from "../../../test/support/env.ts";
import {
  startIndexer,
  rawDocument,
  deleteSearchIndex,
  type IndexerHarness,
} from "../../indexer/test/support/indexer-harness.ts";
import { createLlmRewriter } from "../../indexer/src/rewriting/llm-rewriter.ts";
import { createSmtpTransport } from "../../leads/src/forwarding/smtp-transport.ts";
import { createLeadsWorkers } from "../../leads/src/leads-workers.ts";
import { startSmtpSink, type SmtpSink } from "../../leads/test/support/smtp-sink.ts";
import { startMedia, type MediaHarness } from "../../media/test/support/media-harness.ts";
import { startImageServer, type ImageServer } from "../../media/test/support/image-server.ts";
import { call, sample, startApi, type ApiHarness, type Partner } from "./support/harness.ts";
import { messagesBetween, topicEnds, type TopicEnds } from "./support/topic-range.ts";

const BASE = "https://market.example.test";
const FROM = "Marketplace leads <leads@market.example.test>";
const messageId = (leadId: string) => `<lead-${leadId}@market.example.test>`;

// An OpenAI-compatible endpoint on loopback standing in for the external rewriting model: it records every text it is sent.
const llmRequests: string[] = [];
const llm = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const body = (await req.json()) as { messages: { content: string }[] };
    llmRequests.push(body.messages[1]!.content);
    return Response.json({
      choices: [{ message: { role: "assistant", content: `Polished: ${body.messages[1]!.content}` } }],
    });
  },
});

let api: ApiHarness;
let indexer: IndexerHarness;
let media: MediaHarness;
let images: ImageServer;
let sink: SmtpSink;
let workers: ReturnType<typeof createLeadsWorkers>;
let transport: ReturnType<typeof createSmtpTransport>;
let kafka: Kafka;
let partner: Partner;
let startEnds: TopicEnds;
const alias = uniqueName("canary-listings");
const leadsGroup = uniqueName("canary-leads");
const partnerIds: string[] = [];
// Letters only, so full-text search treats it as one word.
const word = `canary${Math.random()
  .toString(36)
  .replace(/[^a-z]/g, "")
  .slice(0, 8)}`;
const secretWord = `secret${Math.random()
  .toString(36)
  .replace(/[^a-z]/g, "")
  .slice(0, 8)}`;

let live: { listingId: number; brokerId: string; url: string };
let testing: { listingId: number; brokerId: string; url: string };
const externalListingId = uniqueName("canary-listing");
const externalBrokerId = uniqueName("canary-broker");
// Unique to this run, so "similar listings" on a 410 page are this run's listings first.
const businessType = `Canary ${word}`;

beforeAll(async () => {
  images = await startImageServer();
  sink = await startSmtpSink();
  api = await startApi({ searchAlias: alias });
  kafka = new Kafka({
    clientId: uniqueName("canary"),
    brokers: testUrls().KAFKA_BROKERS.split(","),
    logLevel: logLevel.NOTHING,
  });
  startEnds = await topicEnds(kafka, [Topics.listingEvents.name, Topics.brokerEvents.name, Topics.leadEvents.name]);
  indexer = await startIndexer({
    alias,
    rewriter: createLlmRewriter({
      url: `http://127.0.0.1:${llm.port}/v1`,
      model: "editor",
      timeoutMs: 5000,
      logger: silentLogger,
    }),
  });
  partner = await api.createPartner({ leadTracking: true, test: true });
  partnerIds.push(partner.partnerId);
  media = await startMedia({ env: { MEDIA_ALLOWED_HOSTS: `127.0.0.1:${images.port}` }, partners: partnerIds });
  transport = createSmtpTransport({
    host: "127.0.0.1",
    port: sink.port,
    secure: false,
    from: FROM,
    fromDomain: "market.example.test",
  });
  workers = createLeadsWorkers({
    sql: api.sql,
    kafka,
    logger: silentLogger,
    groupPrefix: leadsGroup,
    publicBaseUrl: BASE,
    mail: { transport, from: FROM, messageIdDomain: "market.example.test" },
    policy: { maxAttempts: 3, retryBaseMs: 200, claimTimeoutMs: 60_000 },
    sweepIntervalMs: 100,
    firstAttemptGraceMs: 1000,
    backoff: { initialMs: 100, maxMs: 1000 },
    partnerIds: () => partnerIds,
  });
  await workers.start();

  // The same broker and listing, once with each key; the test one carries a word only it has.
  const write = async (key: string, description: string) => {
    const b = await call(api.baseUrl, "PUT", `/partner/v1/brokers/${externalBrokerId}`, {
      key,
      body: sample.broker({ forwardingEmail: "crm@broker.example.com" }),
    });
    expect(b.status).toBe(201);
    const body = sample.listing(externalBrokerId, {
      title: `Bakery ${word}`,
      businessType,
      description,
      photos: [{ url: images.url("/photo.jpg"), sortKey: 1 }],
    });
    const l = await call(api.baseUrl, "PUT", `/partner/v1/listings/${externalListingId}`, { key, body });
    expect(l.status).toBe(201);
    return {
      listingId: l.body.serviceListingId as number,
      brokerId: b.body.serviceBrokerId as string,
      url: l.body.serviceListingUrl as string,
    };
  };
  live = await write(partner.apiKey, "A bakery with loyal customers.");
  testing = await write(partner.test!.apiKey, `A bakery with loyal customers and a ${secretWord} recipe.`);
}, 120_000);

afterAll(async () => {
  await workers?.stop();
  transport?.close();
  await sink?.stop();
  await media?.stop();
  await indexer?.stop();
  await deleteSearchIndex(alias);
  await api?.stop();
  images?.stop();
  llm.stop(true);
});

async function until<T>(
  what: string,
  check: () => Promise<T | null | undefined | false>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

const readBack = async (key: string) =>
  (await call(api.baseUrl, "GET", `/partner/v1/listings/${externalListingId}`, { key })).body.listing;
/** Settled: indexed at the current version and every photo processed. */
const settled = (key: string) =>
  until(`the ${key.slice(0, 8)} listing to be indexed with its photos ready`, async () => {
    const l = await readBack(key);
    return l.searchIndex.state === "indexed" &&
      l.photos.every((p: { state: string }) => p.state === "ready") &&
      l.descriptionOptimized !== null
      ? l
      : null;
  });
const search = async (q: string) => {
  const res = await call(api.marketplaceUrl, "GET", `/v1/listings?q=${q}`);
  expect(res.status).toBe(200);
  return res.body;
};
const fetchPage = (path: string, init?: RequestInit) => fetch(`${api.marketplaceUrl}${path}`, init);
/** Every <loc> of the sitemap: of sitemap.xml itself, or of every file it indexes when it is an index. */
async function sitemapLocations(): Promise<string[]> {
  const locs = (xml: string) => [...xml.matchAll(/<loc>([^<]+)<\/loc>/g)].map((x) => x[1]!);
  const res = await fetchPage("/sitemap.xml");
  expect(res.status).toBe(200);
  const xml = await res.text();
  if (!xml.includes("<sitemapindex")) return locs(xml);
  const all: string[] = [];
  for (const file of locs(xml)) all.push(...locs(await (await fetchPage(new URL(file).pathname)).text()));
  return all;
}
/** Links and text of a page that would give a listing away. */
const mentions = (html: string, listingId: number, ...words: string[]) =>
  html.includes(`/listings/${listingId}"`) ||
  html.includes(`/listings/${listingId}/`) ||
  words.some((w) => html.includes(w));
/** The same, on a page at the listing's own address: its canonical URL (as on any 404 page) is not a link to it. */
const ownPageMentions = (html: string, listingId: number, ...words: string[]) =>
  mentions(html.replaceAll(`"${BASE}/listings/${listingId}"`, '""'), listingId, ...words);

describe("canary: a test listing never reaches buyers", () => {
  test("search, public pages and the sitemap never show it, and its description never goes to the external model, while the partner's read-back behaves as live", async () => {
    const [liveRead, testRead] = await Promise.all([settled(partner.apiKey), settled(partner.test!.apiKey)]);

    // Buyer search finds the live listing and never the test one; the test one is not in the index at all.
    const found = await until("the live listing to be searchable", async () => {
      const body = await search(word);
      return body.results.length > 0 ? body : null;
    });
    expect(found.results.map((r: { serviceListingId: number }) => r.serviceListingId)).toEqual([live.listingId]);
    expect(found.total).toBe(1);
    expect((await search(secretWord)).results).toEqual([]);
    expect(await rawDocument(indexer.opensearch, alias, testing.listingId)).toBeNull();
    expect(await rawDocument(indexer.opensearch, alias, live.listingId)).not.toBeNull();

    // The search page (HTML) shows what the JSON search shows.
    const searchPage = await fetchPage(`/listings?q=${word}`);
    expect(searchPage.status).toBe(200);
    const searchHtml = await searchPage.text();
    expect(searchHtml).toContain(`/listings/${live.listingId}"`);
    expect(mentions(searchHtml, testing.listingId, secretWord)).toBe(false);
    const secretSearch = await (await fetchPage(`/?q=${secretWord}`)).text();
    expect(secretSearch).toContain("0 businesses for sale");
    expect(mentions(secretSearch, testing.listingId)).toBe(false);

    // No public page, JSON view or profile; the live ones exist, and the live broker's page lists only live listings.
    expect((await fetchPage(`/listings/${testing.listingId}`)).status).toBe(404);
    expect((await fetchPage(`/brokers/${testing.brokerId}`)).status).toBe(404);
    expect((await fetchPage(`/v1/listings/${testing.listingId}`)).status).toBe(404);
    expect((await fetchPage(`/v1/brokers/${testing.brokerId}`)).status).toBe(404);
    expect((await fetchPage(`/listings/${live.listingId}`)).status).toBe(200);
    const brokerPage = await fetchPage(`/brokers/${live.brokerId}`);
    expect(brokerPage.status).toBe(200);
    const brokerHtml = await brokerPage.text();
    expect(brokerHtml).toContain(`/listings/${live.listingId}"`);
    expect(mentions(brokerHtml, testing.listingId, secretWord)).toBe(false);

    // The sitemap names the live listing and broker, never the test ones.
    const locations = await sitemapLocations();
    expect(locations).toEqual(
      expect.arrayContaining([`${BASE}/listings/${live.listingId}`, `${BASE}/brokers/${live.brokerId}`]),
    );
    expect(locations).not.toContain(`${BASE}/listings/${testing.listingId}`);
    expect(locations).not.toContain(`${BASE}/brokers/${testing.brokerId}`);

    // The external model saw the live description and never the test one's.
    expect(llmRequests.some((t) => t.includes("loyal customers."))).toBe(true);
    expect(llmRequests.some((t) => t.includes(secretWord))).toBe(false);

    // What the partner reads back behaves as live: same data, photos processed, indexed, the same history shape.
    const comparable = (l: any) => ({
      ...l,
      serviceListingId: undefined,
      serviceBrokerId: undefined,
      serviceListingUrl: undefined,
      mode: undefined,
      description: undefined,
      descriptionOptimized: undefined,
      createdAt: undefined,
      updatedAt: undefined,
      statusHistory: l.statusHistory.map((s: { from: string; to: string }) => ({ from: s.from, to: s.to })),
      // The descriptions differ (the test one carries a secret word), so their warnings' messages do too.
      warnings: l.warnings.map((w: { path: string; code: string }) => ({ path: w.path, code: w.code })),
      photos: l.photos.map((p: { url: string; state: string; width: number; height: number; variants: unknown[] }) => ({
        url: p.url,
        state: p.state,
        width: p.width,
        height: p.height,
        variants: p.variants.length,
      })),
    });
    expect(comparable(testRead)).toEqual(comparable(liveRead));
    expect(testRead.mode).toBe("test");
    expect(testRead.descriptionOptimized).toBe(rewriteDescription(testRead.description));
    expect(liveRead.descriptionOptimized).toStartWith("Polished:");
    expect(testRead.serviceListingUrl).toStartWith(`${BASE}/preview/listings/${testing.listingId}?`);
    const preview = await fetch(testRead.serviceListingUrl.replace(BASE, api.marketplaceUrl));
    expect(preview.status).toBe(200);
    expect(await preview.text()).toContain("Preview of a test listing.");

    // Its events flowed like the live ones, marked as test.
    const events = (
      await messagesBetween(kafka, startEnds, await topicEnds(kafka, [Topics.listingEvents.name]))
    ).filter((m) => m.partnerId === partner.partnerId && m.type === "listing.upserted");
    expect(events.map((e) => [e.aggregateId, e.mode]).sort()).toEqual(
      [
        [String(live.listingId), "live"],
        [String(testing.listingId), "test"],
      ].sort(),
    );
  }, 120_000);

  test("no e-mail goes out for its leads, and only the test key counts them", async () => {
    // Buyers cannot reach it; the partner simulates a lead with the test key.
    const refused = await call(api.marketplaceUrl, "POST", `/v1/listings/${testing.listingId}/leads`, {
      body: { name: "Ann", email: "ann@example.com", message: "Hi" },
    });
    expect(refused.status).toBe(404);
    const simulated = await call(api.baseUrl, "POST", `/partner/v1/test/listings/${externalListingId}/leads`, {
      key: partner.test!.apiKey,
      body: { name: "Sim Buyer", email: "sim@example.com", message: `About the ${secretWord} recipe` },
    });
    expect(simulated.status).toBe(202);
    // A real lead on the live listing, sent after it: its e-mail arriving shows the mailer is working.
    const real = await call(api.marketplaceUrl, "POST", `/v1/listings/${live.listingId}/leads`, {
      body: { name: "Ann Buyer", email: "ann@example.com", message: "Is it available?" },
    });
    expect(real.status).toBe(202);
    await sink.waitFor(messageId(real.body.leadId), 60_000);

    // Both lead events are on Kafka; wait until the counter and the mailer have consumed past them.
    await until(
      "the lead events to be published",
      async () =>
        (
          await api.sql`SELECT count(*)::int AS n FROM outbox WHERE message_key IN (${simulated.body.leadId}, ${real.body.leadId}) AND published_at IS NULL`
        )[0]!.n === 0,
    );
    const ends = await topicEnds(kafka, [Topics.leadEvents.name]);
    for (const group of [`${leadsGroup}-counter`, `${leadsGroup}-mailer`])
      await groupPast(group, Topics.leadEvents.name, ends);
    // The sweeper runs every 100 ms and sends anything due after 1 s: give it several rounds too.
    await Bun.sleep(1500);

    expect(sink.byMessageId(messageId(simulated.body.leadId))).toEqual([]);
    expect(sink.received.some((m) => m.raw.includes(secretWord) || m.raw.includes("Sim Buyer"))).toBe(false);
    const [lead] =
      await api.sql`SELECT mode, delivery_state, delivery_attempts FROM leads WHERE id = ${simulated.body.leadId}`;
    expect(lead).toEqual({ mode: "test", delivery_state: "skipped", delivery_attempts: 0 });
    expect(
      (await api.sql`SELECT count(*)::int AS n FROM counted_leads WHERE lead_id = ${simulated.body.leadId}`)[0]!.n,
    ).toBe(0);

    const count = async (key: string) =>
      (await call(api.baseUrl, "GET", `/partner/v1/offices/${partner.officeId}/leads/count`, { key })).body.totalLeads;
    expect(
      await until("the live lead to be counted", async () => ((await count(partner.apiKey)) === 1 ? true : null)),
    ).toBe(true);
    expect(await count(partner.test!.apiKey)).toBe(1);

    const leadEvents = (await messagesBetween(kafka, startEnds, ends)).filter((m) => m.partnerId === partner.partnerId);
    expect(leadEvents.map((e) => [e.aggregateId, e.mode]).sort()).toEqual(
      [
        [simulated.body.leadId, "test"],
        [real.body.leadId, "live"],
      ].sort(),
    );
  }, 120_000);

  test("the listing page's inquiry form cannot reach it, and once sold it is a 404 (never a 410) and never a similar listing", async () => {
    const leadsOf = async (id: number) =>
      (await api.sql`SELECT count(*)::int AS n FROM leads WHERE listing_id = ${id}`)[0]!.n as number;
    const before = await leadsOf(testing.listingId);
    const form = new URLSearchParams({
      name: "Ann Buyer",
      email: "ann@example.com",
      message: "Is it available?",
    }).toString();
    const posted = await fetchPage(`/listings/${testing.listingId}/inquiry`, {
      method: "POST",
      body: form,
      headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE },
    });
    expect(posted.status).toBe(404);
    expect(ownPageMentions(await posted.text(), testing.listingId, word, secretWord)).toBe(false);
    // The confirmation's address says nothing about it either.
    const sent = await fetchPage(`/listings/${testing.listingId}/inquiry/sent`);
    expect(
      ownPageMentions(
        (await sent.text()).replaceAll(`"${BASE}/listings/${testing.listingId}/inquiry/sent"`, '""'),
        testing.listingId,
        word,
        secretWord,
      ),
    ).toBe(false);
    expect(await leadsOf(testing.listingId)).toBe(before);

    // Sold: a live listing's page answers 410 with similar listings; the test one's stays a plain 404.
    const sell = async (key: string, externalId: string) =>
      expect(
        (await call(api.baseUrl, "PUT", `/partner/v1/listings/${externalId}`, { key, body: { status: "SOLD" } }))
          .status,
      ).toBe(200);
    await sell(partner.test!.apiKey, externalListingId);
    const testGone = await fetchPage(`/listings/${testing.listingId}`, { headers: { accept: "text/html" } });
    expect(testGone.status).toBe(404);
    expect(ownPageMentions(await testGone.text(), testing.listingId, word, secretWord)).toBe(false);
    expect((await fetchPage(`/v1/listings/${testing.listingId}`)).status).toBe(404);

    // A second live listing of the same business type, sold: its 410 page suggests the live listing only.
    const other = uniqueName("canary-sold");
    const created = await call(api.baseUrl, "PUT", `/partner/v1/listings/${other}`, {
      key: partner.apiKey,
      body: sample.listing(externalBrokerId, { businessType, title: "Another bakery", photos: [] }),
    });
    expect(created.status).toBe(201);
    // The test listing back on the market: were the rule about status alone, it would be the first similar listing.
    expect(
      (
        await call(api.baseUrl, "PUT", `/partner/v1/listings/${externalListingId}`, {
          key: partner.test!.apiKey,
          body: { status: "FOR_SALE" },
        })
      ).status,
    ).toBe(200);
    await sell(partner.apiKey, other);
    const gone = await fetchPage(`/listings/${created.body.serviceListingId}`, { headers: { accept: "text/html" } });
    expect(gone.status).toBe(410);
    const goneHtml = await gone.text();
    expect(goneHtml).toContain(`/listings/${live.listingId}"`);
    expect(mentions(goneHtml, testing.listingId, secretWord)).toBe(false);
    expect(await sitemapLocations()).not.toContain(`${BASE}/listings/${testing.listingId}`);
  }, 60_000);
});

/** Waits until the consumer group has committed, on every partition that received messages, at least `ends`. */
async function groupPast(groupId: string, topic: string, ends: TopicEnds): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const target = ends.get(topic)!;
    const from = startEnds.get(topic)!;
    await until(`${groupId} to consume ${topic}`, async () => {
      const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
      const byPartition = new Map(committed!.partitions.map((p) => [p.partition, Number(p.offset)]));
      return [...target].every(
        ([partition, end]) => end <= (from.get(partition) ?? 0) || (byPartition.get(partition) ?? -1) >= end,
      );
    });
  } finally {
    await admin.disconnect();
  }
}
