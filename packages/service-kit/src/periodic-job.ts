// One implementation of "do this every so often" for background loops (the outbox relay, retry sweepers, the
// reconciler, claim keepers, cleanups, the change-feed sequencer). What each loop used to write by hand:
// - a pause between ticks that stop() and wake() cut short (a loop shuts down at once instead of finishing its wait);
// - a tick that says "more is waiting" runs again at once; a wake-up that came during a tick does the same, so a
//   signal (a fan-out, a NOTIFY) is never lost between a tick's query and its pause;
// - a failed tick is logged and paced (the interval, or a backoff with jitter that resets after a success):
//   no failure ever ends the loop or the process;
// - an optional lease (held-lease.ts): ticks run only while this instance holds it, others stand by;
// - stop() waits for the tick in flight, then gives the lease up so another instance takes over at once.
import type { HeldLease } from "./held-lease.ts";
import type { Logger } from "./logger.ts";

export interface TickContext {
  /** stop() was called: a long tick should end its work early where that is safe. */
  isStopping(): boolean;
}

export interface PeriodicJobOptions {
  /** For logs. */
  name: string;
  logger: Logger;
  /** One round of work; true: more is waiting, run again at once. */
  tick: (ctx: TickContext) => Promise<boolean | void>;
  /** Pause between ticks. */
  intervalMs: number;
  /** Pause before the first tick (default 0). */
  firstDelayMs?: number;
  /** After a failed tick: a backoff doubling from initialMs to maxMs, each +0..20% jitter (default: intervalMs). */
  backoff?: { initialMs: number; maxMs: number };
  /** What a failed tick logs (warn, with the error's message); default "<name> failed; trying again". */
  failureMessage?: string;
  /** Ticks run only while this lease is held; a standby tries to take it every standbyMs (default intervalMs). */
  lease?: HeldLease;
  standbyMs?: number;
  /** A failed tick also gives up the lease's renewal (taken again before the next tick). */
  dropLeaseOnFailure?: boolean;
  /** Tests: a fake clock. */
  sleep?: (ms: number, wakeUp: Promise<void>) => Promise<void>;
}

export interface PeriodicJob {
  start(): void;
  /** Stops ticking: ends the pause, waits for the tick in flight, releases the lease. */
  stop(): Promise<void>;
  /** Work is waiting now: end the pause (or, during a tick, run again right after it). */
  wake(): void;
  isRunning(): boolean;
}

const realSleep = (ms: number, wakeUp: Promise<void>) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    void wakeUp.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });

export function createPeriodicJob(opts: PeriodicJobOptions): PeriodicJob {
  const sleepFor = opts.sleep ?? realSleep;
  let running = false;
  let loop: Promise<void> | null = null;
  let wakeRequested = false;
  let wakeCurrent: () => void = () => {};
  const ctx: TickContext = { isStopping: () => !running };

  /** A pause that wake() and stop() end early; a wake-up asked for before it started skips it. */
  function pause(ms: number): Promise<void> {
    if (!running || wakeRequested) return Promise.resolve();
    const wakeUp = new Promise<void>((resolve) => (wakeCurrent = resolve));
    return sleepFor(ms, wakeUp).finally(() => (wakeCurrent = () => {}));
  }

  async function run(): Promise<void> {
    let failureDelay = opts.backoff?.initialMs ?? opts.intervalMs;
    if (opts.firstDelayMs) await pause(opts.firstDelayMs);
    while (running) {
      wakeRequested = false;
      let more = false;
      try {
        if (opts.lease && !(await opts.lease.lead())) {
          // Another instance works; try again later in case it goes away.
          await pause(opts.standbyMs ?? opts.intervalMs);
          continue;
        }
        more = (await opts.tick(ctx)) === true;
        failureDelay = opts.backoff?.initialMs ?? opts.intervalMs;
      } catch (err) {
        opts.logger.warn(opts.failureMessage ?? `${opts.name} failed; trying again`, {
          err: (err as Error).message,
          retryInMs: failureDelay,
        });
        if (opts.dropLeaseOnFailure) opts.lease?.drop();
        if (opts.backoff) {
          await pause(failureDelay + Math.random() * failureDelay * 0.2);
          failureDelay = Math.min(failureDelay * 2, opts.backoff.maxMs);
          continue;
        }
      }
      if (!more) await pause(opts.intervalMs);
    }
    await opts.lease?.release();
  }

  return {
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    async stop() {
      running = false;
      wakeCurrent();
      await loop;
      loop = null;
    },
    wake() {
      wakeRequested = true;
      wakeCurrent();
    },
    isRunning: () => running,
  };
}
