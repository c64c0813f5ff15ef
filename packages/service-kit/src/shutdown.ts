// Ordered graceful shutdown: stop intake first, finish in-flight work, then close clients.
import type { Logger } from "./logger.ts";

export interface Shutdown {
  /** Steps run in registration order when the process is asked to stop. */
  register(name: string, step: () => Promise<unknown> | unknown): void;
  run(reason: string): Promise<void>;
  /** Wires SIGINT/SIGTERM to run(); exits the process when done. */
  listen(): void;
}

export function createShutdown(logger: Logger, opts: { stepTimeoutMs?: number } = {}): Shutdown {
  const steps: { name: string; step: () => Promise<unknown> | unknown }[] = [];
  let running: Promise<void> | null = null;
  const timeout = opts.stepTimeoutMs ?? 15_000;

  const run = (reason: string) => {
    running ??= (async () => {
      logger.info("shutting down", { reason });
      for (const { name, step } of steps) {
        try {
          await Promise.race([
            Promise.resolve().then(step),
            Bun.sleep(timeout).then(() => {
              throw new Error(`timed out after ${timeout} ms`);
            }),
          ]);
          logger.debug("shutdown step done", { step: name });
        } catch (err) {
          logger.error("shutdown step failed", { step: name, err });
        }
      }
      logger.info("stopped");
    })();
    return running;
  };

  return {
    register: (name, step) => void steps.push({ name, step }),
    run,
    listen() {
      for (const signal of ["SIGINT", "SIGTERM"] as const) {
        process.on(signal, () => {
          void run(signal).then(() => process.exit(0));
        });
      }
    },
  };
}
