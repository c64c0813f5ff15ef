// Picks up work whose retry is due, or whose claim expired because its worker died. Events never wait for a
// backoff: the consumer records "retry later" and moves on; this loop does the retry.
import { createInterruptibleSleep, type Logger } from "@pss/service-kit";
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
  let running = false;
  let loop: Promise<void> | null = null;
  const pause = createInterruptibleSleep();

  async function runOnce(): Promise<number> {
    // Outcomes waiting for PostgreSQL go first (media-jobs.ts): their claims may have run out meanwhile.
    if (deps.jobs.waitingForDatabase()) return 0;
    const due = await deps.repository.claimDue(deps.batchSize, deps.leaseMs, deps.partners());
    const results = await Promise.allSettled(due.map((job) => deps.jobs.run(job)));
    for (const r of results) if (r.status === "rejected") deps.logger.warn("retrying an image failed; its claim expires and it is tried again", { err: r.reason });
    return due.length;
  }

  async function run() {
    while (running) {
      let ran = 0;
      try {
        ran = await runOnce();
      } catch (err) {
        deps.logger.warn("retry pass failed", { err });
      }
      // A full batch suggests more is due: go again at once.
      if (running && ran < deps.batchSize) await pause.sleep(deps.pollMs);
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    async stop() {
      running = false;
      pause.wake();
      await loop;
    },
    runOnce,
  };
}
