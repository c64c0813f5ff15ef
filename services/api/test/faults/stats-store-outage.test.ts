// Buyer statistics when their stores are unreachable (issue 24, part 3): a buyer's page never fails or waits for
// them; the counts wait in memory and are written once the store answers again, once. The shared servers are not
// stopped: Redis and PostgreSQL are reached through gated loopback proxies that start closed.
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { silentLogger } from "@pss/service-kit";
import Redis from "ioredis";
import { testUrls, uniqueName } from "../../../../test/support/env.ts";
import { createStatsRecorder } from "../../src/stats/stats-recorder.ts";
import { sample, startApi, type ApiHarness, type Partner } from "../support/harness.ts";
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
    const request = new Request(`http://x/listings/${id}`, {
      headers: { "user-agent": FIREFOX, "x-forwarded-for": "198.51.100.23" },
    });
    recorder.viewed(id, request, null);
    recorder.shown([id, id], request);
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
