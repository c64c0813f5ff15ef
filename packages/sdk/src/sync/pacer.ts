// Paces requests under a requests-per-minute budget shared by all workers (evenly spaced, no bursts), and
// pauses everyone when the API says 429: the limit is per key, so one worker's 429 is every worker's.
export interface Pacer {
  /** Resolves when the next request may go; `units` is what it counts against the budget (a batch: its items). */
  acquire(signal?: AbortSignal, units?: number): Promise<void>;
  /** Nobody sends before now + ms. */
  pauseFor(ms: number): void;
}

export function createPacer(opts: {
  requestsPerMinute: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}): Pacer {
  const interval = opts.requestsPerMinute > 0 ? 60_000 / opts.requestsPerMinute : 0;
  const now = opts.now ?? Date.now;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let nextSlot = 0;
  let pausedUntil = 0;
  return {
    async acquire(signal, units = 1) {
      for (;;) {
        const t = now();
        const start = Math.max(t, nextSlot, pausedUntil);
        if (start <= t) break;
        await sleep(start - t);
        if (signal?.aborted) throw signal.reason;
      }
      if (interval > 0) nextSlot = Math.max(now(), nextSlot) + interval * units;
    },
    pauseFor(ms) {
      pausedUntil = Math.max(pausedUntil, now() + ms);
    },
  };
}
