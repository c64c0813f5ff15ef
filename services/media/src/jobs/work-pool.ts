// A counting semaphore: at most `size` tasks run at once; the rest wait in arrival order.

export interface WorkPool {
  run<T>(task: () => Promise<T>): Promise<T>;
  /** Tasks running now. */
  active(): number;
}

export function createWorkPool(size: number): WorkPool {
  if (!Number.isInteger(size) || size < 1) throw new Error(`pool size must be a positive integer, got ${size}`);
  let running = 0;
  const waiting: (() => void)[] = [];
  return {
    async run(task) {
      if (running >= size) await new Promise<void>((resolve) => waiting.push(resolve));
      else running++;
      try {
        return await task();
      } finally {
        // Hand the slot straight to the next waiter (running stays the same), or free it.
        const next = waiting.shift();
        if (next) next();
        else running--;
      }
    },
    active: () => running,
  };
}
