// Our object store down for 60 s in the middle of a batch is not the partners' images' fault: every photo waits,
// ends `ready` once the store is back, and is downloaded and transformed once, with no attempt spent. The store
// is an S3Proxy of this test's own (test/support/private-s3.ts): the shared one other tests use is never stopped.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createEnvReader, createMediaStorage, readMediaStorageConfig, type MediaStorage } from "@pss/service-kit";
import { sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import { uniqueName } from "../../../test/support/env.ts";
import { privateS3Unavailable, startPrivateS3, type PrivateS3 } from "../../../test/support/private-s3.ts";
import { startImageServer, type ImageServer } from "./support/image-server.ts";
import { startMedia, until, type MediaHarness } from "./support/media-harness.ts";

const OUTAGE_MS = 60_000;
const LISTINGS_BEFORE = 8;
const LISTINGS_DURING = 8;
const unavailable = privateS3Unavailable();
if (unavailable) console.warn(`store-outage.test.ts skipped: ${unavailable}`);

let s3: PrivateS3;
let storage: MediaStorage;
let images: ImageServer;
let api: ApiHarness;
let media: MediaHarness;
let partner: Partner;
let brokerId: string;
const waits: string[] = [];
let waitingNow = 0;
let mostWaiting = 0;

beforeAll(async () => {
  if (unavailable) return;
  s3 = await startPrivateS3();
  const r = createEnvReader({ ...s3.env, S3_PREFIX: `${uniqueName("outage")}/` });
  const config = readMediaStorageConfig(r);
  r.done();
  storage = createMediaStorage(config);
  images = await startImageServer();
  api = await startApi({ mediaStorage: storage });
  partner = await api.createPartner();
  media = await startMedia({
    partners: [partner.partnerId],
    storage,
    env: {
      MEDIA_ALLOWED_HOSTS: `127.0.0.1:${images.port}`,
      MEDIA_MAX_ATTEMPTS: "2",
      MEDIA_RETRY_BASE_MS: "100",
      MEDIA_RETRY_POLL_MS: "100",
    },
    // The production cap is 30 s; a shorter one keeps the test short without changing what is shown.
    outageBackoff: { baseMs: 200, maxMs: 2_000 },
    outageMetrics: {
      waited: (dependency) => void waits.push(dependency),
      waiting: (_dependency, delta) => {
        waitingNow += delta;
        mostWaiting = Math.max(mostWaiting, waitingNow);
      },
    },
  });
  brokerId = uniqueName("broker");
  expect((await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
}, 90_000);

afterAll(async () => {
  await media?.stop();
  await api?.stop();
  images?.stop();
  await s3?.destroy();
});

async function putListings(n: number, tag: string): Promise<string[]> {
  const urls: string[] = [];
  for (let i = 0; i < n; i++) {
    const photos = [images.url(`/photo-3.jpg?t=${tag}-${i}-a`), images.url(`/small.png?t=${tag}-${i}-b`)];
    const res = await partner.put(
      `/partner/v1/listings/${uniqueName("listing")}`,
      sample.listing(brokerId, { photos: photos.map((url, k) => ({ url, sortKey: k + 1 })) }),
    );
    expect(res.status).toBe(201);
    urls.push(...photos);
  }
  return urls;
}

const photoStates = () =>
  media.sql<{ url: string; state: string; attempts: number; failure_reason: string | null }[]>`
    SELECT p.url, p.state, p.attempts, p.failure_reason FROM listing_photos p JOIN listings l ON l.id = p.listing_id WHERE l.partner_id = ${partner.partnerId}::uuid`;

test.skipIf(unavailable !== null)(
  "with the object store stopped for 60 s mid-batch, every photo ends ready once it is back, each processed once and no attempt spent",
  async () => {
    const before = await putListings(LISTINGS_BEFORE, "before");
    // Processing is under way: the first photo is stored and recorded; then the store goes away.
    await until("a first ready photo", async () => (await photoStates()).some((p) => p.state === "ready"), 60_000);
    await s3.stop();
    const stoppedAt = Date.now();
    await expect(storage.check()).rejects.toThrow();
    const during = await putListings(LISTINGS_DURING, "during");
    const all = [...before, ...during];

    // While the store is down nothing fails and nothing is spent: the jobs wait.
    await until("jobs waiting for the store", () => waitingNow > 0, 30_000);
    await Bun.sleep(Math.max(0, OUTAGE_MS - (Date.now() - stoppedAt)));
    const inOutage = await photoStates();
    expect(inOutage.filter((p) => p.state === "failed")).toEqual([]);
    expect(inOutage.filter((p) => p.state === "pending").length).toBeGreaterThan(0);
    expect(Math.max(...inOutage.map((p) => p.attempts))).toBe(1);

    await s3.start();
    const settled = await until(
      "every photo to settle",
      async () => {
        const rows = await photoStates();
        return rows.length === all.length && rows.every((p) => p.state !== "pending") ? rows : null;
      },
      60_000,
    );
    expect(settled.filter((p) => p.state !== "ready")).toEqual([]);
    // One claim each: no attempt went on our outage.
    expect(settled.map((p) => p.attempts)).toEqual(all.map(() => 1));
    // Processed once: one download (and so one transform) per photo, none retried, failed or given back.
    for (const url of all) expect([url, images.hits(new URL(url).pathname + new URL(url).search)]).toEqual([url, 1]);
    const stats = media.service.stats();
    expect(stats).toMatchObject({
      downloads: all.length,
      ready: all.length,
      failed: 0,
      retriesScheduled: 0,
      postponed: 0,
    });
    expect(waits.length).toBeGreaterThan(0);
    expect(new Set(waits)).toEqual(new Set(["storage"]));
    expect(mostWaiting).toBeGreaterThan(0);
    expect(waitingNow).toBe(0);
    await storage.check();
  },
  170_000,
);
