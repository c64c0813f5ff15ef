// A sleep that stop() can cut short, so polling loops shut down at once instead of finishing their wait.
export interface InterruptibleSleep {
  sleep(ms: number): Promise<void>;
  /** Ends the current sleep, if any, immediately. */
  wake(): void;
}

export function createInterruptibleSleep(): InterruptibleSleep {
  let wakeCurrent: (() => void) | null = null;
  return {
    sleep(ms) {
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          wakeCurrent = null;
          resolve();
        };
        const timer = setTimeout(done, ms);
        wakeCurrent = done;
      });
    },
    wake() {
      wakeCurrent?.();
    },
  };
}

/** Any number of sleeps at once (waits of jobs in flight), all ended by wakeAll() when the service stops. */
export function createSleepGroup(): { sleep(ms: number): Promise<void>; wakeAll(): void } {
  const sleepers = new Set<() => void>();
  return {
    sleep: (ms) =>
      new Promise<void>((resolve) => {
        const done = () => (clearTimeout(timer), sleepers.delete(done), resolve());
        const timer = setTimeout(done, ms);
        sleepers.add(done);
      }),
    wakeAll() {
      for (const wake of [...sleepers]) wake();
    },
  };
}
