import { expect, test } from "bun:test";
import { silentLogger, type MediaStorage } from "@pss/service-kit";
import type { ImageDownloader } from "../download/image-downloader.ts";
import type { ImageProcessor } from "../images/image-processor.ts";
import { createMediaJobs, emptyStats, retryDelayMs } from "./media-jobs.ts";
import type { MediaJob, MediaRepository } from "./media-repository.ts";
import { createWorkPool } from "./work-pool.ts";

test("retry delays double per attempt, with ±25% jitter", () => {
  expect([1, 2, 3, 4].map((n) => retryDelayMs(n, 1000, () => 0.5))).toEqual([1000, 2000, 4000, 8000]);
  expect(retryDelayMs(3, 1000, () => 0)).toBe(3000);
  expect(retryDelayMs(3, 1000, () => 0.999999)).toBe(5000);
});

// The job runner with plain fakes: what it records when our store is down (the SQL itself runs in the integration tests).
function fakeRun(opts: { storeFailures: number; dbFailures?: number }) {
  const calls: string[] = [];
  let puts = 0;
  let dbFailures = opts.dbFailures ?? 0;
  const recordCall = (name: string) => async () => {
    if (dbFailures > 0) {
      dbFailures--;
      throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    }
    calls.push(name);
    return true;
  };
  const stats = emptyStats();
  const jobs = createMediaJobs({
    repository: {
      markReady: recordCall("markReady"),
      markFailed: recordCall("markFailed"),
      retryLater: recordCall("retryLater"),
      postpone: recordCall("postpone"),
    } as unknown as MediaRepository,
    downloader: { download: async () => (calls.push("download"), Buffer.from("x")) } as unknown as ImageDownloader,
    processor: {
      photo: async () => ({
        width: 10,
        height: 10,
        warning: null,
        variants: [{ width: 10, height: 10, format: "webp", bytes: new Uint8Array([1]) }],
      }),
    } as unknown as ImageProcessor,
    storage: {
      put: async () => {
        if (++puts <= opts.storeFailures) throw new Error("object storage answered 503");
      },
    } as unknown as MediaStorage,
    downloadPool: createWorkPool(1),
    cpuPool: createWorkPool(1),
    logger: silentLogger,
    stats,
    maxAttempts: 2,
    retryBaseMs: 1,
    outageBackoff: { baseMs: 1, maxMs: 5 },
  });
  const job: MediaJob = {
    kind: "photo",
    photoId: "1",
    listingId: "1",
    url: "http://img/1.jpg",
    attempts: 1,
    claimToken: 1,
  };
  return { jobs, job, calls, stats, puts: () => puts };
}

test("our store failing more times than the image has attempts: the job waits, is processed once and ends ready", async () => {
  const { jobs, job, calls, stats, puts } = fakeRun({ storeFailures: 10, dbFailures: 3 });
  expect(await jobs.run(job)).toBe("ready");
  expect(calls).toEqual(["download", "markReady"]);
  expect(puts()).toBe(11);
  expect(stats).toMatchObject({ downloads: 1, ready: 1, failed: 0, retriesScheduled: 0 });
});

test("a stop while our store is down gives the claim back unspent (postpone), never failed", async () => {
  const { jobs, job, calls } = fakeRun({ storeFailures: Number.MAX_SAFE_INTEGER });
  const outcome = jobs.run(job);
  await Bun.sleep(20);
  jobs.abandonWaits();
  expect(await outcome).toBe("postponed");
  expect(calls).toEqual(["download", "postpone"]);
});
