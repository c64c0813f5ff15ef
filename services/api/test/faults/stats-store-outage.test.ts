// Buyer statistics when their stores are unreachable (issue 24, part 3): a buyer's page never fails or waits for
// them; the counts wait in memory and are written once the store answers again, once. The shared servers are not
// stopped: Redis and PostgreSQL are reached through gated loopback proxies that start closed.
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { silentLogger } from "@pss/service-kit";
import Redis from "ioredis";
import { testUrls, uniqueName } from "../../../../test/support/env.ts";
import { createStatsRecorder } from "../../src/stats/stats-recorder.ts";
import {
  LOOPBACK_PEER,
  LOOPBACK_PROXIES,
  sample,
  startApi,
  type ApiHarness,
  type Partner,
} from "../support/harness.ts";
import { createGatedProxy, endpointOfUrl, viaProxy, type GatedProxy } from "./support/gated-proxy.ts";

const FIREFOX = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:127.0) Gecko/20100101 Firefox/127.0";
let redisProxy: GatedProxy;
let api: ApiHarness;
let partner: Partner;
let brokerId: string;

beforeAll(async () => {
  redisProxy = await createGatedProxy(endpointOfUrl(testUrls().REDIS_URL));
  api = await startApi({ redisUrl: viaProxy(testUrls().REDIS_URL, redisProxy), statsFlushMs: 60_000 });
  partner = await api.createPartner();
  brokerId = uniqueName("broker");
  expect((await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
}, 60_000);
afterAll(async () => {
  await api?.stop();
  await redisProxy?.close();
});

const views = async (listingId: number) =>
  ((await api.sql`SELECT views FROM listing_stats_daily WHERE listing_id = ${listingId}`)[0]?.views as
    | number
    | undefined) ?? 0;

test("Redis unreachable: the page answers at once, the views wait, and are counted once when Redis is back", async () => {
  const put = await partner.put(`/partner/v1/listings/${uniqueName("listing")}`, sample.listing(brokerId));
  const id = put.body.serviceListingId as number;
  const started = performance.now();
  const page = await fetch(`${api.baseUrl}/listings/${id}`, { headers: { "user-agent": FIREFOX } });
  expect(page.status).toBe(200);
  expect(performance.now() - started).toBeLessThan(1000);
  await api.stats.flush();
  await api.stats.flush();
  expect(api.stats.backlog().views).toBe(1);
  expect(await views(id)).toBe(0);

  await redisProxy.open();
  const deadline = Date.now() + 15_000;
  while (api.stats.backlog().views > 0 && Date.now() < deadline) {
    await Bun.sleep(300);
    await api.stats.flush();
  }
  expect(api.stats.backlog()).toEqual({ views: 0, impressions: 0, batches: 0 });
  expect(await views(id)).toBe(1);
  // The same visitor again: already counted today.
  await fetch(`${api.baseUrl}/listings/${id}`, { headers: { "user-agent": FIREFOX } });
  await api.stats.flush();
  expect(await views(id)).toBe(1);
}, 60_000);

test("Redis unreachable: 10,000 views with 10,000 User-Agents from one address wait as 3 hashes; at most maxBuffered wait in all, nothing raw", async () => {
  const closed = await createGatedProxy(endpointOfUrl(testUrls().REDIS_URL));
  const redis = new Redis(viaProxy(testUrls().REDIS_URL, closed), {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    lazyConnect: true,
    retryStrategy: () => 1000,
  });
  redis.on("error", () => {});
  await redis.connect().catch(() => {});
  const recorder = createStatsRecorder({
    sql: api.sql,
    redis,
    logger: silentLogger,
    trustedProxies: LOOPBACK_PROXIES,
    maxBuffered: 1000,
  });
  try {
    await recorder.flush(); // the day's key (PostgreSQL answers)
    const view = (listingId: number, userAgent: string, from: string) =>
      recorder.viewed(
        listingId,
        new Request(`http://x/listings/${listingId}`, {
          headers: { "user-agent": userAgent, "x-forwarded-for": from },
        }),
        LOOPBACK_PEER,
      );
    for (let i = 0; i < 10_000; i++) view(1, `${FIREFOX} build/${i}`, "198.51.100.60");
    await recorder.flush();
    expect(recorder.backlog()).toEqual({ views: 3, impressions: 0, batches: 0 });
    for (let i = 0; i < 5000; i++) view(2, FIREFOX, `10.0.${i >> 8}.${i & 255}`);
    await recorder.flush();
    expect(recorder.backlog()).toEqual({ views: 1000, impressions: 0, batches: 0 });
    // What waits is keyed hashes: no address, no User-Agent.
    const waiting = JSON.stringify(recorder.waiting());
    for (const raw of ["198.51.100.60", "10.0.", "Firefox", "Mozilla", "build/"]) expect(waiting).not.toContain(raw);
    // The oldest gave way (listing 1's three among them).
    expect(recorder.waiting()[0]).toEqual({
      kind: "view",
      listingId: 2,
      day: new Date().toISOString().slice(0, 10),
      address: expect.stringMatching(/^[A-Za-z0-9_-]{16}$/),
      visitor: expect.stringMatching(/^[A-Za-z0-9_-]{11}$/),
    });
  } finally {
    redis.disconnect();
    await closed.close();
  }
}, 60_000);

test("PostgreSQL unreachable: the batch waits and is written once, with the same ID, when it answers again", async () => {
  const put = await partner.put(`/partner/v1/listings/${uniqueName("listing")}`, sample.listing(brokerId));
  const id = put.body.serviceListingId as number;
  const pgProxy = await createGatedProxy(endpointOfUrl(testUrls().DATABASE_URL));
  const sql = postgres(viaProxy(testUrls().DATABASE_URL, pgProxy), { max: 1, connect_timeout: 2, onnotice: () => {} });
  const redis = new Redis(testUrls().REDIS_URL, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    lazyConnect: true,
  });
  await redis.connect();
  const recorder = createStatsRecorder({ sql, redis, logger: silentLogger });
  try {
    // The day's key is fetched while PostgreSQL answers; a page is never counted without it.
    await pgProxy.open();
    await recorder.flush();
    await pgProxy.close();
    const request = (userAgent: string) =>
      new Request(`http://x/listings/${id}`, {
        headers: { "user-agent": userAgent, "x-forwarded-for": "198.51.100.23" },
      });
    recorder.viewed(id, request(FIREFOX), null);
    recorder.shown([id], request(FIREFOX), null);
    recorder.shown([id], request(`${FIREFOX} other`), null);
    await recorder.flush();
    expect(recorder.backlog()).toEqual({ views: 0, impressions: 0, batches: 1 });
    await pgProxy.open();
    await recorder.flush();
    expect(recorder.backlog()).toEqual({ views: 0, impressions: 0, batches: 0 });
    const [row] = await api.sql`SELECT views, impressions FROM listing_stats_daily WHERE listing_id = ${id}`;
    expect(row).toEqual({ views: 1, impressions: 2 });
  } finally {
    await sql.end({ timeout: 1 });
    redis.disconnect();
    await pgProxy.close();
  }
}, 60_000);
