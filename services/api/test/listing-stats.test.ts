// Per-listing buyer statistics (issue 24, part 3; issue 29) through the real API and the real indexer: buyers' page
// views and search impressions (one per visitor per listing per day, at most 3 visitors per address, known bots
// excluded) and inquiries, read back by the partner as daily buckets. Counting goes through memory, Redis and
// PostgreSQL as in production; Redis holds keyed hashes only.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { silentLogger } from "@pss/service-kit";
import { uniqueName } from "../../../test/support/env.ts";
import {
  deleteSearchIndex,
  indexedState,
  startIndexer,
  type IndexerHarness,
} from "../../indexer/test/support/indexer-harness.ts";
import { createStatsRecorder } from "../src/stats/stats-recorder.ts";
import {
  call,
  LOOPBACK_PEER,
  LOOPBACK_PROXIES,
  sample,
  startApi,
  type ApiHarness,
  type Partner,
} from "./support/harness.ts";

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
  api = await startApi({ searchAlias: idx.alias, trustProxy: true });
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

/** A buyer's request; `from`: its address (X-Forwarded-For, as our own proxy would set it), else 127.0.0.1. */
const visit = (path: string, userAgent: string, from?: string) =>
  fetch(`${api.baseUrl}${path}`, {
    headers: { "user-agent": userAgent, ...(from ? { "x-forwarded-for": from } : {}) },
  });
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

  test("an impression per visitor per listing per day, at most 3 visitors per address; bots' searches are not counted", async () => {
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
    expect((await visit(`/v1/listings?q=${token}`, FIREFOX)).status).toBe(200); // the same visitor again
    expect((await visit(`/listings?q=sourdough+${token}`, CHROME)).status).toBe(200); // the HTML search page: only a
    expect((await visit(`/v1/listings?q=${token}`, GOOGLEBOT)).status).toBe(200);
    // One address rotating its User-Agent: 3 more visitors, not 30.
    for (let i = 0; i < 30; i++)
      expect((await visit(`/v1/listings?q=${token}`, `${FIREFOX} build/${i}`, "198.51.100.50")).status).toBe(200);
    await flushed();
    expect((await stats(plain, a.id)).body.totals).toEqual({ views: 0, impressions: 5 });
    expect((await stats(plain, b.id)).body.totals).toEqual({ views: 0, impressions: 4 });
  }, 60_000);

  test("inquiries are counted per day only for keys with lead tracking; without it the field is absent", async () => {
    const t = await listing(tracked);
    const lead = await call(api.baseUrl, "POST", `/v1/listings/${t.serviceListingId}/leads`, {
      body: { name: "Ann Buyer", email: "ann@example.com", message: "Is the lease renewable?" },
    });
    expect(lead.status).toBe(202);
    const res = await stats(tracked, t.id);
    // The whole answer: counts only, nothing of the lead.
    expect(res.body).toEqual({
      status: "success",
      externalListingId: t.id,
      serviceListingId: t.serviceListingId,
      startDate: today(),
      endDate: today(),
      days: [{ date: today(), views: 0, impressions: 0, inquiries: 1 }],
      totals: { views: 0, impressions: 0, inquiries: 1 },
    });
    const p = await listing(plain);
    expect((await stats(plain, p.id)).body.days[0]).toEqual({ date: today(), views: 0, impressions: 0 });
  });

  test("10,000 views with 10,000 User-Agents from one address count as 3 views (sent over HTTP, 100 at a time)", async () => {
    const l = await listing(plain);
    const statuses = new Map<number, number>();
    for (let start = 0; start < 10_000; start += 100) {
      const answers = await Promise.all(
        Array.from({ length: 100 }, async (_, i) => {
          // Every tenth through the HTML page, the rest through the JSON view: both count the same.
          const path =
            (start + i) % 10 === 0 ? `/listings/${l.serviceListingId}` : `/v1/listings/${l.serviceListingId}`;
          const res = await visit(path, `${FIREFOX} build/${start + i}`, "198.51.100.20");
          await res.arrayBuffer();
          return res.status;
        }),
      );
      for (const status of answers) statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
    expect(Object.fromEntries(statuses)).toEqual({ 200: 10_000 });
    await flushed();
    expect((await stats(plain, l.id)).body.totals).toEqual({ views: 3, impressions: 0 });
    // Redis holds one address hash for the listing, with its 3 visitors' hashes.
    const held = await api.redis.hgetall(`pss:stats:v:${today()}:${l.serviceListingId}`);
    expect(Object.values(held)).toEqual([expect.stringMatching(/^(\.[A-Za-z0-9_-]{11}){3}$/)]);
  }, 120_000);

  test("each address counts on its own: IPv4 (also IPv4-mapped) per address, IPv6 per /64", async () => {
    const l = await listing(plain);
    const path = `/listings/${l.serviceListingId}`;
    const views: [string, string][] = [
      ["198.51.100.31", FIREFOX],
      ["198.51.100.31", CHROME],
      ["198.51.100.32", FIREFOX],
      ["::ffff:198.51.100.32", CHROME], // the same address as above
      ["2001:db8:1:3::1", FIREFOX],
    ];
    // Two addresses of one /64, five browsers each: one group of at most 3.
    for (let i = 0; i < 5; i++)
      views.push(["2001:db8:1:2::1", `${CHROME} v${i}`], ["2001:db8:1:2::ffff", `${FIREFOX} v${i}`]);
    for (const [from, userAgent] of views) expect((await visit(path, userAgent, from)).status).toBe(200);
    await flushed();
    expect((await stats(plain, l.id)).body.totals).toEqual({ views: 2 + 2 + 1 + 3, impressions: 0 });
  });

  test("IPv6 is also capped per /48: 200 /64s of one site count as 12 visitors a listing a day, another site on its own", async () => {
    // Issue 37, item 6: a /48 holds 65,536 /64s, each 3 visitors; without this cap it counted as 196,608.
    const l = await listing(plain);
    const other = await listing(plain);
    const path = `/listings/${l.serviceListingId}`;
    for (let start = 0; start < 200; start += 50)
      await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const res = await visit(path, FIREFOX, `2001:db8:4848:${(start + i).toString(16)}::1`);
          expect(res.status).toBe(200);
          await res.arrayBuffer();
        }),
      );
    for (let i = 0; i < 3; i++) expect((await visit(path, FIREFOX, `2001:db8:4849:${i}::1`)).status).toBe(200);
    // The same site on another listing: a cap of its own.
    expect((await visit(`/listings/${other.serviceListingId}`, FIREFOX, "2001:db8:4848:1::1")).status).toBe(200);
    await flushed();
    expect((await stats(plain, l.id)).body.totals).toEqual({ views: 12 + 3, impressions: 0 });
    expect((await stats(plain, other.id)).body.totals).toEqual({ views: 1, impressions: 0 });
  }, 60_000);

  test("Redis holds keyed hashes only: one visitor's hashes differ between listings; no address or User-Agent is stored", async () => {
    const a = await listing(plain);
    const b = await listing(plain);
    for (const l of [a, b])
      expect((await visit(`/listings/${l.serviceListingId}`, FIREFOX, "198.51.100.40")).status).toBe(200);
    await flushed();
    const stored = async (id: number) => api.redis.hgetall(`pss:stats:v:${today()}:${id}`);
    const [onA, onB] = [await stored(a.serviceListingId), await stored(b.serviceListingId)];
    // Per listing: the address's hash, holding the hashes of the visitors counted for it (here one); an IPv4 address
    // has no site counter.
    for (const held of [onA, onB]) {
      expect(Object.keys(held)).toEqual([expect.stringMatching(/^[A-Za-z0-9_-]{16}$/)]);
      expect(Object.values(held)).toEqual([expect.stringMatching(/^\.[A-Za-z0-9_-]{11}$/)]);
    }
    expect(Object.keys(onA)[0]).not.toBe(Object.keys(onB)[0]);
    expect(Object.values(onA)[0]).not.toBe(Object.values(onB)[0]);
    expect(await api.redis.ttl(`pss:stats:v:${today()}:${a.serviceListingId}`)).toBeGreaterThan(24 * 3600);
    // The key those hashes are made with is kept apart from them, in PostgreSQL.
    const keys = await api.sql`SELECT length(key) AS bytes FROM listing_stats_day_keys WHERE day = ${today()}::date`;
    expect([...keys]).toEqual([{ bytes: 32 }]);
  });

  test("API instances share the day's key (one visitor through two counts once); keys of past days are deleted", async () => {
    const l = await listing(plain);
    await api.sql`INSERT INTO listing_stats_day_keys (day, key) VALUES ('2020-01-01', ${Buffer.alloc(32)}) ON CONFLICT DO NOTHING`;
    const other = createStatsRecorder({
      sql: api.sql,
      redis: api.redis,
      logger: silentLogger,
      trustedProxies: LOOPBACK_PROXIES,
    });
    await other.flush();
    const request = new Request(`http://x/listings/${l.serviceListingId}`, {
      headers: { "user-agent": FIREFOX, "x-forwarded-for": "198.51.100.70" },
    });
    // As from our own proxy on loopback, like the requests below.
    other.viewed(l.serviceListingId, request, LOOPBACK_PEER);
    await other.stop();
    expect((await visit(`/listings/${l.serviceListingId}`, FIREFOX, "198.51.100.70")).status).toBe(200);
    await flushed();
    expect((await stats(plain, l.id)).body.totals).toEqual({ views: 1, impressions: 0 });
    const days =
      await api.sql`SELECT to_char(day, 'YYYY-MM-DD') AS day FROM listing_stats_day_keys WHERE day < ${today()}::date`;
    expect([...days]).toEqual([]);
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
