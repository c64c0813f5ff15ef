// Claims and late writes of the media service (docs/media.md), on real servers: the real job code, repository,
// downloader, processor and storage, with a loopback image host the test holds back.
// - Fencing: a worker stalled past its claim (a slow image host) finally fails; another worker took the photo over
//   meanwhile and succeeds. The late failure changes nothing: the photo ends ready.
// - Garbage collection: the sweep has found a file unreferenced and is about to delete it when a job stores the
//   same content (its put only refreshes the file) and commits `ready`. The ready photo's files survive.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger, type MediaStorage } from "@pss/service-kit";
import { sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import { uniqueName } from "../../../test/support/env.ts";
import { createImageDownloader } from "../src/download/image-downloader.ts";
import { createGarbageCollector } from "../src/gc/garbage-collector.ts";
import { createImageProcessor } from "../src/images/image-processor.ts";
import { createMediaJobs, emptyStats } from "../src/jobs/media-jobs.ts";
import { createMediaRepository, type MediaJob } from "../src/jobs/media-repository.ts";
import { createWorkPool } from "../src/jobs/work-pool.ts";
import { makePicture } from "./support/image-server.ts";
import { createTestStorage, until, type StorageKind, type TestStorage } from "./support/media-harness.ts";

const CLAIM_MS = 400;

/** Per path, the answers to its requests in order: each waits for its gate, then answers. */
type Scripted = { gate?: Promise<void>; answer: () => Response };
const scripts = new Map<string, Scripted[]>();
const hits = new Map<string, number>();
let host: ReturnType<typeof Bun.serve>;
let api: ApiHarness;
let partner: Partner;
let brokerId: string;
let picture: Buffer;
const logLines: string[] = [];
const storages: TestStorage[] = [];

beforeAll(async () => {
  picture = await makePicture(1600, 1200, "jpeg");
  host = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const n = (hits.get(path) ?? 0) + 1;
      hits.set(path, n);
      const step = scripts.get(path)?.[n - 1] ?? {
        answer: () => new Response(picture, { headers: { "content-type": "image/jpeg" } }),
      };
      await step.gate;
      return step.answer();
    },
  });
  api = await startApi();
  partner = await api.createPartner();
  brokerId = uniqueName("broker");
  expect((await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
});
afterAll(async () => {
  host?.stop(true);
  for (const s of storages) await s.cleanup();
  await api?.stop();
});

const image =
  (bytes: Buffer = picture) =>
  () =>
    new Response(bytes, { headers: { "content-type": "image/jpeg" } });
const notFound = () => new Response("not found", { status: 404 });
const hostUrl = (path: string) => `http://127.0.0.1:${host.port}${path}`;

/** One media instance's job runner on the given storage. */
function jobsOn(storage: MediaStorage, name: string) {
  const stats = emptyStats();
  const jobs = createMediaJobs({
    repository: createMediaRepository(api.sql),
    downloader: createImageDownloader({
      limits: { maxBytes: 5 * 1024 * 1024, connectTimeoutMs: 5000, totalTimeoutMs: 30_000, maxRedirects: 0 },
      allowedHosts: [`127.0.0.1:${host.port}`],
    }),
    processor: createImageProcessor({ maxInputPixels: 50_000_000 }),
    storage,
    downloadPool: createWorkPool(2),
    cpuPool: createWorkPool(1),
    logger: createLogger({ service: name, level: "debug", write: (line) => logLines.push(line) }),
    stats,
    maxAttempts: 3,
    retryBaseMs: 100,
  });
  return { jobs, stats };
}

async function listingWith(
  url: string | null,
  externalId = uniqueName("listing"),
): Promise<{ externalId: string; listingId: string }> {
  const res = await partner.put(
    `/partner/v1/listings/${externalId}`,
    sample.listing(brokerId, { photos: url ? [{ url, sortKey: 1 }] : [] }),
  );
  expect([200, 201]).toContain(res.status);
  return { externalId, listingId: String(res.body.serviceListingId) };
}

const photoRow = async (listingId: string) =>
  (
    await api.sql`SELECT id::text, state, failure_reason AS "failureReason", media_names AS names FROM listing_photos WHERE listing_id = ${listingId}::bigint`
  )[0]!;

async function storedEverywhere(storage: MediaStorage, names: string[]): Promise<Record<string, boolean>> {
  const out: Record<string, boolean> = {};
  for (const name of names) out[name] = await storage.exists(name);
  return out;
}

test("a worker stalled past its claim fails late; another worker took the photo over and succeeded: the photo stays ready", async () => {
  const stored = await createTestStorage("local");
  storages.push(stored);
  const repository = createMediaRepository(api.sql);
  const path = `/img/${uniqueName("fenced")}.jpg`;
  const first = Promise.withResolvers<void>();
  const second = Promise.withResolvers<void>();
  // The first download hangs, then the host answers 404 (a permanent failure); the second gets the picture.
  scripts.set(path, [
    { gate: first.promise, answer: notFound },
    { gate: second.promise, answer: image() },
  ]);
  const { listingId } = await listingWith(hostUrl(path));

  const a = jobsOn(stored.storage, "media-a");
  const b = jobsOn(stored.storage, "media-b");
  const [jobA] = await repository.claimListingPhotos(listingId, CLAIM_MS);
  expect(jobA).toBeDefined();
  const runA = a.jobs.run(jobA!);
  await until("the first download", () => hits.get(path) === 1);
  // The first worker's claim runs out (its claim keeper could not renew it) while the download hangs.
  await Bun.sleep(CLAIM_MS + 300);
  const due = await repository.claimDue(10, 60_000, [partner.partnerId]);
  const jobB = due.find(
    (j): j is Extract<MediaJob, { kind: "photo" }> => j.kind === "photo" && j.listingId === listingId,
  );
  expect(jobB).toBeDefined();
  const runB = b.jobs.run(jobB!);
  await until("the second download", () => hits.get(path) === 2);

  // The stalled worker's late failure comes while the second worker is still downloading.
  first.resolve();
  const outcomeA = await runA;
  second.resolve();
  const outcomeB = await runB;

  const photo = await photoRow(listingId);
  expect(photo).toMatchObject({ state: "ready", failureReason: null });
  expect(Object.values(await storedEverywhere(stored.storage, photo.names))).not.toContain(false);
  expect([outcomeA, outcomeB]).toEqual(["discarded", "ready"]);
  expect([a.stats.discarded, b.stats.ready]).toEqual([1, 1]);
  // Not spent on the stale writer: only the two claims moved the token.
  expect((await api.sql`SELECT claim_token FROM listing_photos WHERE id = ${photo.id}::bigint`)[0]!.claim_token).toBe(
    2,
  );
}, 60_000);

describe.each(["local", "s3"] as StorageKind[])(
  "garbage collection against a store of the same file (%s storage)",
  (kind) => {
    test("the sweep has chosen a file to delete when a job stores the same content and commits ready: the file survives", async () => {
      const stored = await createTestStorage(kind);
      storages.push(stored);
      const repository = createMediaRepository(api.sql);
      const { jobs } = jobsOn(stored.storage, `media-${kind}`);

      // A picture of this test's own (random colour), under two URLs.
      const own = image(await makePicture(1600, 1200, "jpeg"));
      const [earlierPath, laterPath] = [`/img/${uniqueName("earlier")}.jpg`, `/img/${uniqueName("later")}.jpg`];
      scripts.set(earlierPath, [{ answer: own }]);
      scripts.set(laterPath, [{ answer: own }]);

      // A photo processed and then removed from its listing leaves its files unreferenced (but stored).
      const earlier = await listingWith(hostUrl(earlierPath));
      const [earlierJob] = await repository.claimListingPhotos(earlier.listingId, 60_000);
      expect(await jobs.run(earlierJob!)).toBe("ready");
      const names: string[] = (await photoRow(earlier.listingId)).names;
      await listingWith(null, earlier.externalId);
      expect(await repository.unreferenced(names)).toEqual(names);

      // The collector stops right before deleting the first of those files.
      const atDelete = Promise.withResolvers<string>();
      const goOn = Promise.withResolvers<void>();
      let paused = false;
      const gcStorage: MediaStorage = Object.assign(Object.create(stored.storage), {
        async delete(name: string) {
          if (!paused && names.includes(name)) {
            paused = true;
            atDelete.resolve(name);
            await goOn.promise;
          }
          return stored.storage.delete(name);
        },
      });
      const gc = createGarbageCollector({
        sql: api.sql,
        repository,
        storage: gcStorage,
        graceMs: 1000,
        intervalMs: 0,
        logger: createLogger({ service: "gc", level: "error", write: () => {} }),
      });
      // As if every file were past its grace period. Another run of this file may hold the collector's lease a moment.
      const sweeping = until(
        "a sweep that is not skipped",
        async () => {
          const result = await gc.sweep(new Date(Date.now() + 60_000));
          return result.skipped ? null : result;
        },
        90_000,
      );
      await Promise.race([
        atDelete.promise,
        sweeping.then(() => Promise.reject(new Error("the sweep ended without deleting"))),
      ]);

      // Meanwhile a job processes the same picture for another listing: same content, same names.
      const later = await listingWith(hostUrl(laterPath));
      const [laterJob] = await repository.claimListingPhotos(later.listingId, 60_000);
      const running = jobs.run(laterJob!);
      // Until the job has committed, or it waits for the file's lock.
      const waitsForLock = async () =>
        (
          await api.sql`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`
        ).length > 0;
      let done = false;
      void running.finally(() => (done = true));
      await until("the job to commit or to wait for the collector", async () => done || (await waitsForLock()));
      goOn.resolve();
      const [result, outcome] = await Promise.all([sweeping, running]);

      expect(outcome).toBe("ready");
      const photo = await photoRow(later.listingId);
      expect(photo.state).toBe("ready");
      expect([...photo.names].sort()).toEqual([...names].sort());
      expect(await storedEverywhere(stored.storage, photo.names)).toEqual(
        Object.fromEntries(photo.names.map((n: string) => [n, true])),
      );
      for (const name of photo.names) expect(await stored.storage.read(name)).not.toBeNull();
      expect(result.skipped).toBe(false);
    }, 120_000);
  },
);
