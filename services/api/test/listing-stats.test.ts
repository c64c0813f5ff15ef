// Per-listing buyer statistics (issue 24, part 3) through the real API and the real indexer: buyers' page views
// (one per visitor per listing per day, known bots excluded), search impressions and inquiries, read back by the
// partner as daily buckets. Counting goes through memory, Redis and PostgreSQL as in production.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uniqueName } from "../../../test/support/env.ts";
import {
  deleteSearchIndex,
  indexedState,
  startIndexer,
  type IndexerHarness,
} from "../../indexer/test/support/indexer-harness.ts";
import { call, sample, startApi, type ApiHarness, type Partner } from "./support/harness.ts";

let idx: IndexerHarness;
let api: ApiHarness;
let tracked: Partner; // lead tracking: sees inquiries
let plain: Partner;
let brokerId: string;
const token = Math.random().toString(36).slice(2, 8);

const FIREFOX = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:127.0) Gecko/20100101 Firefox/127.0";
const CHROME =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const today = () => new Date().toISOString().slice(0, 10);

beforeAll(async () => {
  idx = await startIndexer();
  // Behind our own proxy, so each test visitor can have an address of its own.
  api = await startApi({ searchAlias: idx.alias });
  tracked = await api.createPartner({ leadTracking: true, test: true });
  plain = await api.createPartner();
  brokerId = uniqueName("broker");
  for (const p of [tracked, plain])
    expect((await p.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
}, 60_000);
afterAll(async () => {
  await idx?.stop();
  await api?.stop();
  if (idx) await deleteSearchIndex(idx.alias);
});

async function listing(p: Partner, overrides: Record<string, unknown> = {}) {
  const id = uniqueName("listing");
  const res = await p.put(
    `/partner/v1/listings/${id}`,
    sample.listing(brokerId, { title: "Stats bakery", ...overrides }),
  );
  expect(res.status).toBe(201);
  return { id, serviceListingId: res.body.serviceListingId as number };
}

const visit = (path: string, userAgent: string) =>
  fetch(`${api.baseUrl}${path}`, { headers: { "user-agent": userAgent } });
const stats = (p: Partner, id: string, query = "") =>
  p.get(`/partner/v1/listings/${encodeURIComponent(id)}/stats${query}`);
async function flushed() {
  await api.stats.flush();
  expect(api.stats.backlog()).toEqual({ views: 0, impressions: 0, batches: 0 });
}

describe("counting", () => {
  test("one view per visitor per listing per day: a repeat, the JSON view and bots add nothing; another browser is another visitor", async () => {
    const l = await listing(plain);
    for (let i = 0; i < 3; i++) expect((await visit(`/listings/${l.serviceListingId}`, FIREFOX)).status).toBe(200);
    expect((await visit(`/v1/listings/${l.serviceListingId}`, FIREFOX)).status).toBe(200);
    expect((await visit(`/listings/${l.serviceListingId}`, CHROME)).status).toBe(200);
    for (const bot of [GOOGLEBOT, "curl/8.5.0", ""])
      expect((await visit(`/listings/${l.serviceListingId}`, bot)).status).toBe(200);
    await flushed();
    const res = await stats(plain, l.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: "success",
      externalListingId: l.id,
      serviceListingId: l.serviceListingId,
      startDate: today(),
      endDate: today(),
      days: [{ date: today(), views: 2, impressions: 0 }],
      totals: { views: 2, impressions: 0 },
    });
    // Nothing about the visitors is stored in PostgreSQL: the day's counts only.
    const rows = await api.sql`SELECT * FROM listing_stats_daily WHERE listing_id = ${l.serviceListingId}`;
    expect(rows.map((r) => Object.keys(r).sort())).toEqual([["day", "impressions", "listing_id", "views"]]);
  });

  test("each appearance in buyers' search results is an impression; bots' searches are not", async () => {
    const a = await listing(plain, { description: `Sourdough ${token} and pastries.` });
    const b = await listing(plain, { description: `Croissants ${token} only.` });
    await indexedState(api.sql, a.serviceListingId);
    await indexedState(api.sql, b.serviceListingId);
    await idx.opensearch.indices.refresh({ index: idx.alias });
    const json = await visit(`/v1/listings?q=${token}`, FIREFOX);
    expect(json.status).toBe(200);
    expect(
      ((await json.json()) as any).results.map((r: { serviceListingId: number }) => r.serviceListingId).sort(),
    ).toEqual([a.serviceListingId, b.serviceListingId].sort());
    expect((await visit(`/listings?q=sourdough+${token}`, CHROME)).status).toBe(200); // the HTML search page: only a
    expect((await visit(`/v1/listings?q=${token}`, GOOGLEBOT)).status).toBe(200);
    await flushed();
    expect((await stats(plain, a.id)).body.totals).toEqual({ views: 0, impressions: 2 });
    expect((await stats(plain, b.id)).body.totals).toEqual({ views: 0, impressions: 1 });
  }, 60_000);

  test("inquiries are counted per day only for keys with lead tracking; without it the field is absent", async () => {
    const t = await listing(tracked);
    const lead = await call(api.baseUrl, "POST", `/v1/listings/${t.serviceListingId}/leads`, {
      body: { name: "Ann Buyer", email: "ann@example.com", message: "Is the lease renewable?" },
    });
    expect(lead.status).toBe(202);
    const res = await stats(tracked, t.id);
    expect(res.body.days).toEqual([{ date: today(), views: 0, impressions: 0, inquiries: 1 }]);
    expect(res.body.totals).toEqual({ views: 0, impressions: 0, inquiries: 1 });
    expect(JSON.stringify(res.body)).not.toContain("Ann");
    const p = await listing(plain);
    expect((await stats(plain, p.id)).body.days[0]).toEqual({ date: today(), views: 0, impressions: 0 });
  });

  test("a flush retried after its write committed adds nothing (counts lag, never double)", async () => {
    const l = await listing(plain);
    const { writeStatsBatch } = await import("../src/stats/stats-repository.ts");
    const batch = crypto.randomUUID();
    const rows = [{ listingId: l.serviceListingId, day: today(), views: 3, impressions: 5 }];
    await writeStatsBatch(api.sql, batch, rows);
    await writeStatsBatch(api.sql, batch, rows);
    expect((await stats(plain, l.id)).body.totals).toEqual({ views: 3, impressions: 5 });
  });
});

describe("GET /partner/v1/listings/{externalListingId}/stats", () => {
  test("daily buckets over the range the dates touch, zeros included, within the listing's life", async () => {
    const l = await listing(plain);
    await api.sql`UPDATE listings SET created_at = now() - interval '3 days' WHERE id = ${l.serviceListingId}`;
    const day = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
    await api.sql`INSERT INTO listing_stats_daily (listing_id, day, views, impressions) VALUES (${l.serviceListingId}, ${day(2)}::date, 4, 9)`;
    const all = await stats(plain, l.id);
    expect(all.body.days.map((d: { date: string; views: number }) => [d.date, d.views])).toEqual([
      [day(3), 0],
      [day(2), 4],
      [day(1), 0],
      [day(0), 0],
    ]);
    const ranged = await stats(plain, l.id, `?startDate=${day(2)}T12:00:00Z&endDate=${day(1)}T00:00:00Z`);
    expect(ranged.body).toMatchObject({
      startDate: day(2),
      endDate: day(2),
      days: [{ date: day(2), views: 4, impressions: 9 }],
      totals: { views: 4, impressions: 9 },
    });
  });

  test("bad dates get the lead-count routes' 400 message", async () => {
    const l = await listing(plain);
    const lead = await tracked.get(`/partner/v1/offices/${tracked.officeId}/leads/count?startDate=yesterday`);
    const res = await stats(plain, l.id, "?startDate=yesterday");
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ status: "error", error: lead.body.error });
    expect(res.body.error).toBe(
      "Invalid query parameters: dates must be ISO 8601 date-times with a time zone (Z or an offset), e.g. 2024-05-01T00:00:00Z; startDate is not (got 'yesterday')",
    );
    const reversed = await stats(plain, l.id, "?startDate=2026-05-02T00:00:00Z&endDate=2026-05-01T00:00:00Z");
    expect(reversed.status).toBe(400);
    expect(reversed.body.error).toContain("is after endDate");
    expect((await stats(plain, l.id, "?from=2026-05-01T00:00:00Z")).status).toBe(400);
  });

  test("scoped to the key: other partners' and other modes' listings and unknown IDs are 404", async () => {
    const l = await listing(plain);
    expect(await stats(tracked, l.id)).toMatchObject({
      status: 404,
      body: { status: "error", error: "Listing not found" },
    });
    expect(await stats(plain, uniqueName("nope"))).toMatchObject({
      status: 404,
      body: { status: "error", error: "Listing not found" },
    });
    const testListing = uniqueName("listing");
    expect((await tracked.test!.put(`/partner/v1/listings/${testListing}`, sample.listing(brokerId))).status).toBe(
      400 + 4,
    ); // no test broker yet: 404
    expect((await tracked.test!.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
    expect((await tracked.test!.put(`/partner/v1/listings/${testListing}`, sample.listing(brokerId))).status).toBe(201);
    expect((await tracked.test!.get(`/partner/v1/listings/${testListing}/stats`)).status).toBe(200);
    expect((await stats(tracked, testListing)).status).toBe(404);
    expect((await fetch(`${api.baseUrl}/partner/v1/listings/${l.id}/stats`)).status).toBe(401);
  });
});
