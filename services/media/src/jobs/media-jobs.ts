// Runs one claimed photo or avatar: download, transform, store, record. Every per-image failure ends as state
// (retry later, or failed with its reason); only infrastructure errors (PostgreSQL) propagate to the caller.
import { contentName, type Logger, type MediaStorage } from "@pss/service-kit";
import { Failures, MediaFailure } from "../failures.ts";
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
}

export const emptyStats = (): MediaStats => ({ eventsHandled: 0, staleEvents: 0, downloads: 0, ready: 0, failed: 0, retriesScheduled: 0, discarded: 0 });

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
}

export type JobOutcome = "ready" | "failed" | "retry" | "discarded";

/** Exponential backoff with jitter: base, 2x base, 4x base, ... each ±25%. */
export function retryDelayMs(attempt: number, baseMs: number, random = Math.random): number {
  return Math.round(baseMs * 2 ** Math.max(0, attempt - 1) * (0.75 + random() * 0.5));
}

export function createMediaJobs(deps: MediaJobsDeps) {
  const { repository, stats } = deps;
  /** Claimed jobs not yet produced: the claim keeper renews their claims (a 50-photo listing waits in the pools). */
  const working = new Set<MediaJob>();

  async function store(processed: ProcessedImage): Promise<{ variants: VariantRecord[]; names: string[]; confirmStored: () => Promise<void> }> {
    const variants: VariantRecord[] = [];
    const names: string[] = [];
    const put = async (name: string, v: ProcessedImage["variants"][number]) => {
      try {
        await deps.storage.put(name, v.bytes, v.format === "webp" ? "image/webp" : "image/jpeg");
      } catch (err) {
        deps.logger.error("storing a variant failed", { name, err });
        throw Failures.storage();
      }
    };
    for (const v of processed.variants) {
      const name = contentName(v.bytes, v.format);
      await put(name, v);
      variants.push({ width: v.width, height: v.height, format: v.format, key: name });
      names.push(name);
    }
    // Run by markReady with the names locked against the garbage collector: a name that was stored already (an
    // identical image) may have been swept since our put only refreshed it; store it again before referencing it.
    const confirmStored = async () => {
      await Promise.all(
        processed.variants.map(async (v, i) => {
          const name = names[i]!;
          let there: boolean;
          try {
            there = await deps.storage.exists(name);
          } catch (err) {
            deps.logger.error("checking a stored variant failed", { name, err });
            throw Failures.storage();
          }
          if (!there) {
            deps.logger.warn("a stored variant was garbage-collected before its reference committed; storing it again", { name });
            await put(name, v);
          }
        }),
      );
    };
    return { variants, names, confirmStored };
  }

  async function produce(job: MediaJob) {
    stats.downloads++;
    const bytes = await deps.downloadPool.run(() => deps.downloader.download(job.url));
    const processed = await deps.cpuPool.run(() => (job.kind === "photo" ? deps.processor.photo(bytes) : deps.processor.avatar(bytes)));
    return { processed, ...(await store(processed)) };
  }

  return {
    /** `logger`: the event's (its lines carry the request ID) when an event started the job; default the service's. */
    async run(job: MediaJob, logger: Logger = deps.logger): Promise<JobOutcome> {
      const log = logger.child(job.kind === "photo" ? { photoId: job.photoId, listingId: job.listingId } : { brokerId: job.brokerId });
      const started = performance.now();
      let outcome: JobOutcome;
      let failureReason: string | null = null;
      working.add(job);
      try {
        const { processed, variants, names, confirmStored } = await produce(job).finally(() => working.delete(job));
        const written = await repository.markReady(job, { width: processed.width, height: processed.height, warning: processed.warning, variants, names }, confirmStored);
        outcome = written ? "ready" : "discarded";
      } catch (err) {
        if (!(err instanceof MediaFailure)) {
          // Not the image's fault: record it as a transient failure so the job is retried, bounded like the rest.
          log.error("processing failed unexpectedly", { err });
        }
        const failure = err instanceof MediaFailure ? err : new MediaFailure("internal processing error", true);
        failureReason = failure.reason;
        if (failure.transient && job.attempts < deps.maxAttempts) {
          const delay = retryDelayMs(job.attempts, deps.retryBaseMs);
          outcome = (await repository.retryLater(job, failure.reason, delay)) ? "retry" : "discarded";
          log.info("image failed; will retry", { reason: failure.reason, attempt: job.attempts, retryInMs: delay });
        } else {
          outcome = (await repository.markFailed(job, failure.reason)) ? "failed" : "discarded";
          log.info("image failed", { reason: failure.reason, attempt: job.attempts });
        }
      }
      if (outcome === "ready") stats.ready++;
      else if (outcome === "failed") stats.failed++;
      else if (outcome === "retry") stats.retriesScheduled++;
      else stats.discarded++;
      if (outcome === "ready") log.info("image ready", { attempt: job.attempts });
      // Removed or replaced meanwhile, or this claim ran out and another instance took the image (fencing token).
      else if (outcome === "discarded") log.info("image result not recorded: the image was replaced, or its claim was taken over", { attempt: job.attempts, reason: failureReason });
      deps.metrics?.job(job.kind, outcome, failureReason, (performance.now() - started) / 1000);
      return outcome;
    },
    /** The jobs this instance is downloading, transforming or storing now (or waiting in its pools to). */
    working: (): MediaJob[] => [...working],
  };
}

export type MediaJobs = ReturnType<typeof createMediaJobs>;
