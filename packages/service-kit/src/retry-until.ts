// Boot steps that need a dependency (create topics, join a consumer group) retry with backoff instead of
// failing the process: a service started during an outage waits, reports not ready, and starts by itself.
import type { Logger } from "./logger.ts";

export async function retryUntilDone<T>(
  what: string,
  step: () => Promise<T>,
  opts: {
    logger: Logger;
    isStopping?: () => boolean;
    initialDelayMs?: number;
    maxDelayMs?: number;
    sleep?: (ms: number) => Promise<void>;
  },
): Promise<T | undefined> {
  const sleep = opts.sleep ?? ((ms: number) => Bun.sleep(ms));
  let delay = opts.initialDelayMs ?? 500;
  const maxDelay = opts.maxDelayMs ?? 5_000;
  for (let attempt = 1; ; attempt++) {
    if (opts.isStopping?.()) return undefined;
    try {
      const result = await step();
      if (attempt > 1) opts.logger.info(`${what}: done`, { attempt });
      return result;
    } catch (err) {
      if (opts.isStopping?.()) return undefined;
      opts.logger.warn(`${what} failed; retrying`, { attempt, retryInMs: delay, err: (err as Error).message });
      await sleep(delay * (0.8 + Math.random() * 0.4));
      delay = Math.min(delay * 2, maxDelay);
    }
  }
}
