// A lease held across rounds of work (the outbox relay, the reconciler): taken when free, renewed in the background
// from then on, given up when lost or stopped. What each leader used to keep by hand: the renewal to stop when the
// lease is lost, and its "active" metric and log lines.
import type { LeaderLease } from "./leader-lease.ts";
import type { Logger } from "./logger.ts";

export interface HeldLease {
  readonly lease: LeaderLease;
  /** True when this instance holds the lease now (taking it if it is free); renewed in the background meanwhile. */
  lead(): Promise<boolean>;
  /** Stops renewing without giving the lease up (the next lead() takes it again, or another instance does). */
  drop(): void;
  /** Stops renewing and gives the lease up, so another instance takes over at once. */
  release(): Promise<void>;
}

export function createHeldLease(opts: {
  lease: LeaderLease;
  logger: Logger;
  /** Logged (info) when the lease is taken: "<name> active". */
  name: string;
  fields?: () => Record<string, unknown>;
  /** This instance became active (true) or not any more (false): a metric. */
  onActive?: (active: boolean) => void;
}): HeldLease {
  const { lease, logger } = opts;
  let stopRenewing: (() => void) | null = null;

  function drop(): void {
    if (!stopRenewing) return;
    stopRenewing();
    stopRenewing = null;
    opts.onActive?.(false);
  }

  return {
    lease,
    async lead() {
      if (stopRenewing) {
        if (lease.isHeld()) return true;
        // Lost (renewals failed for longer than the lease, or another took it after a stall): try again from scratch.
        logger.warn(`${opts.name} lost its lease; standing by`, { holder: lease.holder });
        drop();
      }
      if (!(await lease.acquire())) return false;
      stopRenewing = lease.keepRenewed();
      opts.onActive?.(true);
      logger.info(`${opts.name} active`, { ...opts.fields?.(), holder: lease.holder });
      return true;
    },
    drop,
    async release() {
      drop();
      await lease.release().catch((err) =>
        logger.warn(`releasing the ${opts.name} lease failed; another instance takes over when it runs out`, {
          err: (err as Error).message,
        }),
      );
    },
  };
}
