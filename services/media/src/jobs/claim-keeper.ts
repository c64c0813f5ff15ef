// Keeps this instance's claims alive while it works on them. A claim (MEDIA_CLAIM_TIMEOUT_MS) is what stops a
// second instance from starting on an image; a listing with 50 photos waits in the download and CPU pools far
// longer than one image takes, so claims are renewed every third of their length while their jobs last. An
// instance that dies stops renewing: its claims run out within one claim timeout and any instance's retry loop
// takes the images up.
import { createPeriodicJob, type Logger } from "@pss/service-kit";
import type { MediaJob, MediaRepository } from "./media-repository.ts";

export interface ClaimKeeper {
  start(): void;
  stop(): Promise<void>;
  /** One renewal now; returns how many claims were still held. */
  renewOnce(): Promise<number>;
}

export function createClaimKeeper(deps: {
  repository: MediaRepository;
  working: () => MediaJob[];
  leaseMs: number;
  logger: Logger;
}): ClaimKeeper {
  const everyMs = Math.max(100, Math.floor(deps.leaseMs / 3));

  async function renewOnce(): Promise<number> {
    const jobs = deps.working();
    if (jobs.length === 0) return 0;
    const held = await deps.repository.renewClaims(jobs, deps.leaseMs);
    // Fewer held than worked on: some ran out (a stall longer than the claim) or were finished or replaced meanwhile.
    if (held < jobs.length) deps.logger.debug("some image claims were no longer held", { working: jobs.length, held });
    return held;
  }

  // PostgreSQL briefly away: the next round tries again; the claims last two more rounds.
  const job = createPeriodicJob({
    name: "claim keeper",
    logger: deps.logger,
    intervalMs: everyMs,
    firstDelayMs: everyMs,
    failureMessage: "renewing image claims failed",
    tick: () => renewOnce().then(() => {}),
  });

  return {
    start: () => job.start(),
    stop: () => job.stop(),
    renewOnce,
  };
}
