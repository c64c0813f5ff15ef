// Runs one claimed photo or avatar: download, transform, store, record. Every per-image failure ends as state
// (retry later, or failed with its reason). A failure of our own dependencies is not the image's: the object
// store or PostgreSQL being down is waited out in place (the job keeps its claim and its processed variants, so
// it is downloaded and transformed once) and costs no attempt (failures.ts, classifyJobError).
import {
  contentName,
  countOutageWaits,
  createSleepGroup,
  inChildSpan,
  OutageWaitAbandoned,
  outageDelayMs,
  waitOutOutage,
  type Logger,
  type MediaStorage,
  type OutageBackoff,
  type OutageMetrics,
} from "@pss/service-kit";
import { classifyJobError, isDatabaseOutage, isStorageOutage, StorageUnavailable } from "../failures.ts";
import type { ImageDownloader } from "../download/image-downloader.ts";
import type { ImageProcessor, ProcessedImage } from "../images/image-processor.ts";
import type { MediaMetrics } from "../media-metrics.ts";
import type { WorkPool } from "./work-pool.ts";
import type { MediaJob, MediaRepository, VariantRecord } from "./media-repository.ts";

export interface MediaStats {
  eventsHandled: number;
  staleEvents: number;
  downloads: number;
  ready: number;
  failed: number;
  retriesScheduled: number;
  /** Results not written because the photo or avatar was removed or replaced meanwhile, or the claim was taken over. */
  discarded: number;
  /** Jobs given back without spending an attempt: the process stopped while one of our dependencies was down. */
  postponed: number;
}

export const emptyStats = (): MediaStats => ({
  eventsHandled: 0,
  staleEvents: 0,
  downloads: 0,
  ready: 0,
  failed: 0,
  retriesScheduled: 0,
  discarded: 0,
  postponed: 0,
});

export interface MediaJobsDeps {
  repository: MediaRepository;
  downloader: ImageDownloader;
  processor: ImageProcessor;
  storage: MediaStorage;
  downloadPool: WorkPool;
  cpuPool: WorkPool;
  logger: Logger;
  stats: MediaStats;
  maxAttempts: number;
  retryBaseMs: number;
  metrics?: MediaMetrics;
  /** Waits on our own dependencies (media_dependency_waits_total, media_jobs_waiting_for_dependency). */
  outageMetrics?: OutageMetrics;
  /** Between tries of a dependency that is down; default 1 s doubling to at most 30 s (outage-wait.ts). */
  outageBackoff?: OutageBackoff;
}

export type JobOutcome = "ready" | "failed" | "retry" | "discarded" | "postponed";

/** Exponential backoff with jitter: base, 2x base, 4x base, ... each ±25%. */
export function retryDelayMs(attempt: number, baseMs: number, random = Math.random): number {
  return Math.round(baseMs * 2 ** Math.max(0, attempt - 1) * (0.75 + random() * 0.5));
}

export function createMediaJobs(deps: MediaJobsDeps) {
  const { repository, stats } = deps;
  /** Claimed jobs not yet produced: the claim keeper renews their claims (a 50-photo listing waits in the pools). */
  const working = new Set<MediaJob>();
  // Waits on a dependency end when the service stops (abandonWaits): the job is given back without spending its attempt.
  let stopping = false;
  const { sleep, wakeAll } = createSleepGroup();
  // Jobs whose outcome waits for PostgreSQL: the retry loop claims nothing meanwhile, so when it is back their
  // outcomes are written before this instance could take them up again (a claim that ran out during the outage).
  const { metrics: outageMetrics, waiting: waitingForDatabase } = countOutageWaits("postgres", deps.outageMetrics);
  const outage = (dependency: "storage" | "postgres", what: string, logger: Logger) => ({
    dependency,
    what,
    isOutage: dependency === "storage" ? isStorageOutage : isDatabaseOutage,
    logger,
    metrics: outageMetrics,
    backoff: deps.outageBackoff,
    isStopping: () => stopping,
    sleep,
  });
  /** A PostgreSQL write of the job's outcome, waited through an outage of PostgreSQL. */
  const record = <T>(what: string, log: Logger, write: () => Promise<T>) =>
    waitOutOutage(write, outage("postgres", what, log));

  async function store(
    processed: ProcessedImage,
    log: Logger,
  ): Promise<{ variants: VariantRecord[]; names: string[]; confirmStored: () => Promise<void> }> {
    const variants: VariantRecord[] = [];
    const names: string[] = [];
    // Whatever the store answers, it is ours, not the image's: wait until it takes the variant.
    const put = (name: string, v: ProcessedImage["variants"][number]) =>
      waitOutOutage(
        () =>
          deps.storage
            .put(name, v.bytes, v.format === "webp" ? "image/webp" : "image/jpeg")
            .catch((err) => Promise.reject(new StorageUnavailable(err))),
        outage("storage", "storing a variant", log),
      );
    for (const v of processed.variants) {
      const name = contentName(v.bytes, v.format);
      await put(name, v);
      variants.push({ width: v.width, height: v.height, format: v.format, key: name });
      names.push(name);
    }
    // Run by markReady with the names locked against the garbage collector: a name that was stored already (an
    // identical image) may have been swept since our put only refreshed it; store it again before referencing it.
    // One try, never a wait: it runs inside markReady's transaction, and a store that is down must not pin a
    // connection and the listing's lock (run() waits for the store outside the transaction, then tries again).
    const confirmStored = async () => {
      const storageCall = <T>(call: () => Promise<T>) =>
        call().catch((err) => Promise.reject(new StorageUnavailable(err)));
      await Promise.all(
        processed.variants.map(async (v, i) => {
          const name = names[i]!;
          if (await storageCall(() => deps.storage.exists(name))) return;
          log.warn("a stored variant was garbage-collected before its reference committed; storing it again", {
            name,
          });
          await storageCall(() => deps.storage.put(name, v.bytes, v.format === "webp" ? "image/webp" : "image/jpeg"));
        }),
      );
    };
    return { variants, names, confirmStored };
  }

  /** Download, resize, store: a span each, children of the image's (which the event's consumer span holds). */
  async function produce(job: MediaJob, log: Logger) {
    stats.downloads++;
    const bytes = await inChildSpan("download", async (span) => {
      const body = await deps.downloadPool.run(() => deps.downloader.download(job.url));
      span?.setAttribute("pss.bytes", body.length);
      return body;
    });
    const processed = await inChildSpan("resize", () =>
      deps.cpuPool.run(() => (job.kind === "photo" ? deps.processor.photo(bytes) : deps.processor.avatar(bytes))),
    );
    const stored = await inChildSpan("store", async (span) => {
      span?.setAttribute("pss.variants", processed.variants.length);
      return store(processed, log);
    });
    return { processed, ...stored };
  }

  async function runJob(job: MediaJob, logger: Logger): Promise<JobOutcome> {
    const log = logger.child(
      job.kind === "photo" ? { photoId: job.photoId, listingId: job.listingId } : { brokerId: job.brokerId },
    );
    const started = performance.now();
    let outcome: JobOutcome;
    let failureReason: string | null = null;
    working.add(job);
    try {
      // The job stays among the working ones (its claim renewed) until its outcome is recorded: a wait for the
      // store or PostgreSQL can last longer than a claim.
      const { processed, variants, names, confirmStored } = await produce(job, log);
      const result = {
        width: processed.width,
        height: processed.height,
        warning: processed.warning,
        variants,
        names,
      };
      // The store down while markReady confirms the files: its transaction is rolled back (locks and connection
      // given back) and the store waited for out here; once it answers again outside a transaction (files stored
      // again if need be), markReady is tried again (it confirms again under the lock: the collector may have run).
      let storeWasDown = false;
      const written = await waitOutOutage(
        async () => {
          if (storeWasDown) await confirmStored();
          try {
            return await record("recording a ready image", log, () => repository.markReady(job, result, confirmStored));
          } catch (err) {
            if (err instanceof StorageUnavailable) storeWasDown = true;
            throw err;
          }
        },
        outage("storage", "confirming the stored variants", log),
      );
      outcome = written ? "ready" : "discarded";
    } catch (err) {
      if (err instanceof OutageWaitAbandoned) {
        // Stopping while our dependency is down: give the claim back, attempt unspent (if PostgreSQL answers).
        const delay = outageDelayMs(1, deps.outageBackoff);
        outcome = (await repository.postpone(job, `waiting for ${err.dependency}`, delay)) ? "postponed" : "discarded";
        log.warn("stopping while a dependency is down; image given back without spending an attempt", {
          dependency: err.dependency,
          attempt: job.attempts,
        });
      } else {
        const kind = classifyJobError(err);
        // An outage that reached here was not waited for (a defect): the caller sees it; the claim runs out.
        if (kind.side === "ours") throw err;
        // Not the image's fault either: record it as a transient failure so the job is retried, bounded like the rest.
        if (kind.side === "internal") log.error("processing failed unexpectedly", { err });
        const failure = kind.failure;
        failureReason = failure.reason;
        if (failure.transient && job.attempts < deps.maxAttempts) {
          const delay = retryDelayMs(job.attempts, deps.retryBaseMs);
          outcome = (await record("recording a retry", log, () => repository.retryLater(job, failure.reason, delay)))
            ? "retry"
            : "discarded";
          log.info("image failed; will retry", { reason: failure.reason, attempt: job.attempts, retryInMs: delay });
        } else {
          outcome = (await record("recording a failed image", log, () => repository.markFailed(job, failure.reason)))
            ? "failed"
            : "discarded";
          log.info("image failed", { reason: failure.reason, attempt: job.attempts });
        }
      }
    } finally {
      working.delete(job);
    }
    if (outcome === "ready") stats.ready++;
    else if (outcome === "failed") stats.failed++;
    else if (outcome === "retry") stats.retriesScheduled++;
    else if (outcome === "postponed") stats.postponed++;
    else stats.discarded++;
    if (outcome === "ready") log.info("image ready", { attempt: job.attempts });
    // Removed or replaced meanwhile, or this claim ran out and another instance took the image (fencing token).
    else if (outcome === "discarded")
      log.info("image result not recorded: the image was replaced, or its claim was taken over", {
        attempt: job.attempts,
        reason: failureReason,
      });
    deps.metrics?.job(job.kind, outcome, failureReason, (performance.now() - started) / 1000);
    return outcome;
  }

  return {
    /** `logger`: the event's (its lines carry the request ID) when an event started the job; default the service's. */
    async run(job: MediaJob, logger: Logger = deps.logger): Promise<JobOutcome> {
      return inChildSpan(
        `media ${job.kind}`,
        async (span) => {
          const outcome = await runJob(job, logger);
          span?.setAttribute("pss.outcome", outcome);
          return outcome;
        },
        {
          attributes:
            job.kind === "photo"
              ? { "pss.photo_id": String(job.photoId), "pss.listing_id": String(job.listingId) }
              : { "pss.broker_id": String(job.brokerId) },
        },
      );
    },
    /** The jobs this instance is downloading, transforming or storing now (or waiting in its pools to). */
    working: (): MediaJob[] => [...working],
    /** Whether some job's outcome is waiting for PostgreSQL to answer again. */
    waitingForDatabase: () => waitingForDatabase() > 0,
    /** The service is stopping: jobs waiting for a dependency give their claims back instead of waiting on. */
    abandonWaits() {
      stopping = true;
      wakeAll();
    },
  };
}

export type MediaJobs = ReturnType<typeof createMediaJobs>;
