// Picks up work whose retry is due, or whose claim expired because its worker died. Events never wait for a
// backoff: the consumer records "retry later" and moves on; this loop does the retry.
import { createPeriodicJob, type Logger } from "@pss/service-kit";
import type { MediaJobs } from "./media-jobs.ts";
import type { MediaRepository, PartnerScope } from "./media-repository.ts";

export interface RetryLoop {
  start(): void;
  /** Stops polling and waits for the batch in flight. */
  stop(): Promise<void>;
  /** One pass now; returns how many jobs it ran. */
  runOnce(): Promise<number>;
}

export function createRetryLoop(deps: {
  repository: MediaRepository;
  jobs: MediaJobs;
  logger: Logger;
  pollMs: number;
  batchSize: number;
  leaseMs: number;
  partners: () => PartnerScope;
}): RetryLoop {
  async function runOnce(): Promise<number> {
    // Outcomes waiting for PostgreSQL go first (media-jobs.ts): their claims may have run out meanwhile.
    if (deps.jobs.waitingForDatabase()) return 0;
    const due = await deps.repository.claimDue(deps.batchSize, deps.leaseMs, deps.partners());
    const results = await Promise.allSettled(due.map((job) => deps.jobs.run(job)));
    for (const r of results)
      if (r.status === "rejected")
        deps.logger.warn("retrying an image failed; its claim expires and it is tried again", { err: r.reason });
    return due.length;
  }

  // A full batch suggests more is due: go again at once.
  const job = createPeriodicJob({
    name: "retry pass",
    logger: deps.logger,
    intervalMs: deps.pollMs,
    failureMessage: "retry pass failed",
    tick: async () => (await runOnce()) >= deps.batchSize,
  });

  return {
    start: () => job.start(),
    stop: () => job.stop(),
    runOnce,
  };
}
