// A failure of one of OUR dependencies (the object store, PostgreSQL, the SMTP relay) is never the fault of the
// job a worker holds (a partner's image, a webhook delivery, a lead). Workers wait such an outage out, however
// long it lasts, with a bounded back-off (at most OUTAGE_BACKOFF.maxMs between tries), a log line per try and
// a metric, and go on where they were when the dependency answers again; no attempt of the job is spent and
// nothing is dead-lettered. Only a problem with the job itself spends its attempts. Each service decides in one
// pure function which errors are whose (media failures.ts, leads smtp-errors.ts, webhooks outcome.ts).
import { Counter, Gauge, type Metrics } from "./metrics.ts";
import type { Logger } from "./logger.ts";

export const OUTAGE_BACKOFF = { baseMs: 1_000, maxMs: 30_000 } as const;

export interface OutageBackoff {
  baseMs: number;
  maxMs: number;
}

/** The wait before try `failures + 1` of a dependency that failed `failures` times in a row: doubling, ±20 %, never above maxMs. */
export function outageDelayMs(
  failures: number,
  backoff: OutageBackoff = OUTAGE_BACKOFF,
  random: () => number = Math.random,
): number {
  const raw = backoff.baseMs * 2 ** Math.min(30, Math.max(0, failures - 1));
  return Math.min(backoff.maxMs, Math.round(Math.min(raw, backoff.maxMs) * (0.8 + random() * 0.4)));
}

/** The process is stopping: the wait was given up; the caller releases its job without spending an attempt. */
export class OutageWaitAbandoned extends Error {
  constructor(
    readonly dependency: string,
    readonly lastError: unknown,
  ) {
    super(`gave up waiting for ${dependency}: the process is stopping`);
    this.name = "OutageWaitAbandoned";
  }
}

/** What a wait reports (a service's /metrics: createOutageMetrics). */
export interface OutageMetrics {
  /** One failed try of `dependency` that will be tried again. */
  waited(dependency: string): void;
  /** Jobs waiting on `dependency` now: +1 when one starts waiting, -1 when it goes on or gives up. */
  waiting(dependency: string, delta: 1 | -1): void;
}

export function createOutageMetrics(metrics: Metrics, prefix: string): OutageMetrics {
  const registers = [metrics.registry];
  const waits = new Counter({
    name: `${prefix}_dependency_waits_total`,
    help: "Tries of one of our own dependencies (storage, postgres, smtp) that failed because it was unavailable and were waited out without spending the job's attempts",
    labelNames: ["dependency"],
    registers,
  });
  const waiting = new Gauge({
    name: `${prefix}_jobs_waiting_for_dependency`,
    help: "Jobs waiting now for one of our own dependencies to answer again",
    labelNames: ["dependency"],
    registers,
  });
  return {
    waited: (dependency) => waits.inc({ dependency }),
    waiting: (dependency, delta) => waiting.inc({ dependency }, delta),
  };
}

export interface OutageWaitOptions {
  /** Named in the log lines and the metric: "storage", "postgres", "smtp". */
  dependency: string;
  /** True when the error says the dependency is unavailable (ours); anything else is rethrown at once. */
  isOutage: (err: unknown) => boolean;
  logger: Logger;
  /** What was being done, for the log line ("storing a variant"). */
  what: string;
  metrics?: OutageMetrics;
  backoff?: OutageBackoff;
  /** True once the process is stopping: the wait ends with OutageWaitAbandoned. */
  isStopping?: () => boolean;
  /** Waits `ms` or less (an interruptible sleep woken at stop). */
  sleep?: (ms: number) => Promise<void>;
}

/** Runs `step` until it succeeds or fails for a reason other than an outage, waiting outages out. */
export async function waitOutOutage<T>(step: () => Promise<T>, opts: OutageWaitOptions): Promise<T> {
  const sleep = opts.sleep ?? ((ms: number) => Bun.sleep(ms));
  let failures = 0;
  const started = Date.now();
  try {
    for (;;) {
      try {
        const result = await step();
        if (failures > 0)
          opts.logger.info(`${opts.dependency} is back; going on`, {
            dependency: opts.dependency,
            what: opts.what,
            tries: failures + 1,
            waitedMs: Date.now() - started,
          });
        return result;
      } catch (err) {
        if (!opts.isOutage(err)) throw err;
        if (opts.isStopping?.()) throw new OutageWaitAbandoned(opts.dependency, err);
        failures++;
        if (failures === 1) opts.metrics?.waiting(opts.dependency, 1);
        opts.metrics?.waited(opts.dependency);
        const delay = outageDelayMs(failures, opts.backoff);
        opts.logger.warn(`${opts.dependency} unavailable; waiting (not the job's fault, no attempt spent)`, {
          dependency: opts.dependency,
          what: opts.what,
          tries: failures,
          retryInMs: delay,
          err: (err as Error)?.message ?? String(err),
        });
        await sleep(delay);
        if (opts.isStopping?.()) throw new OutageWaitAbandoned(opts.dependency, err);
      }
    }
  } finally {
    if (failures > 0) opts.metrics?.waiting(opts.dependency, -1);
  }
}

/**
 * Passes waits on to `metrics` and counts the jobs waiting on `dependency` now: a loop that claims work claims
 * nothing while an outcome waits for PostgreSQL, so the waiting outcomes are written before it could take their
 * work up again (a claim that ran out during the outage).
 */
export function countOutageWaits(
  dependency: string,
  metrics?: OutageMetrics,
): { metrics: OutageMetrics; waiting(): number } {
  let waiting = 0;
  return {
    metrics: {
      waited: (d) => metrics?.waited(d),
      waiting: (d, delta) => {
        if (d === dependency) waiting += delta;
        metrics?.waiting(d, delta);
      },
    },
    waiting: () => waiting,
  };
}
