// Keeps `npm start`'s services running: a service that exits is started again after a back-off delay
// (doubling up to a cap, back to the first delay once a run has lasted a while), and says so, while the
// others go on. stop() asks every running service to stop, kills what outlives the grace time, and
// cancels pending restarts. Process creation, sleeping, the clock and logging are injected for tests.

export interface SupervisedChild {
  /** Resolves with the exit code once the process is gone (128 + n after signal n). */
  readonly exited: Promise<number>;
  kill(signal: "SIGTERM" | "SIGKILL"): void;
}

export interface Backoff {
  initialMs: number;
  maxMs: number;
  /** A run that lasted at least this long counts as healthy: the next delay starts from initialMs again. */
  resetAfterMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { initialMs: 1_000, maxMs: 30_000, resetAfterMs: 60_000 };

export interface SupervisorDeps<S extends { name: string }> {
  services: readonly S[];
  spawn(service: S): SupervisedChild;
  sleep(ms: number): Promise<void>;
  log(line: string): void;
  now?: () => number;
  backoff?: Backoff;
  /** How long stop() waits after SIGTERM before SIGKILL. */
  stopTimeoutMs?: number;
}

export interface Supervisor {
  start(): void;
  /** Resolves once every service has exited; nothing is restarted afterwards. */
  stop(): Promise<void>;
}

/** Delay before restart number `attempt` (1-based): initial, doubled each time, capped. */
export function backoffDelay(attempt: number, backoff: Backoff = DEFAULT_BACKOFF): number {
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.max(0, attempt - 1));
}

export function createSupervisor<S extends { name: string }>(deps: SupervisorDeps<S>): Supervisor {
  const now = deps.now ?? Date.now;
  const backoff = deps.backoff ?? DEFAULT_BACKOFF;
  const stopTimeoutMs = deps.stopTimeoutMs ?? 30_000;
  const running = new Map<string, SupervisedChild>();
  const loops: Promise<void>[] = [];
  let stopping = false;
  const stopped = Promise.withResolvers<void>();

  async function keepRunning(service: S) {
    let attempt = 0;
    while (!stopping) {
      const startedAt = now();
      let code: number;
      try {
        const child = deps.spawn(service);
        running.set(service.name, child);
        code = await child.exited;
      } catch (err) {
        // e.g. the executable is missing: same back-off as a crash, so the message repeats slowly.
        deps.log(`start: ${service.name} could not be started: ${(err as Error).message}`);
        code = -1;
      } finally {
        running.delete(service.name);
      }
      if (stopping) return;
      attempt = now() - startedAt >= backoff.resetAfterMs ? 1 : attempt + 1;
      const delay = backoffDelay(attempt, backoff);
      deps.log(
        `start: ${service.name} exited with code ${code}; restarting it in ${delay / 1000} s (restart ${attempt}); the other services keep running`,
      );
      await Promise.race([deps.sleep(delay), stopped.promise]);
      if (!stopping) deps.log(`start: restarting ${service.name}`);
    }
  }

  return {
    start() {
      for (const service of deps.services) loops.push(keepRunning(service));
    },
    async stop() {
      if (!stopping) {
        stopping = true;
        stopped.resolve();
      }
      const children = [...running.values()];
      for (const child of children) child.kill("SIGTERM");
      const allExited = Promise.all(children.map((c) => c.exited)).then(() => true);
      const inTime = await Promise.race([allExited, deps.sleep(stopTimeoutMs).then(() => false)]);
      if (!inTime) {
        deps.log(`start: services still running after ${stopTimeoutMs / 1000} s; killing them`);
        for (const child of children) child.kill("SIGKILL");
      }
      await Promise.all(loops);
    },
  };
}
