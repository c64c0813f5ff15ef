// Ordered graceful shutdown: stop intake first, finish in-flight work, then close clients.
// Bounded twice: each step by stepTimeoutMs, the whole run by totalTimeoutMs, so an orchestrator's
// grace period (docker-compose.yml stop_grace_period) can be set above a known number.
import type { Logger } from "./logger.ts";

export interface Shutdown {
  /** Steps run in registration order when the process is asked to stop. */
  register(name: string, step: () => Promise<unknown> | unknown): void;
  run(reason: string): Promise<void>;
  /** Wires SIGINT/SIGTERM to run(); exits the process when done. */
  listen(): void;
}

export interface ShutdownOptions {
  /** Longest any one step may take (default 15 s). */
  stepTimeoutMs?: number;
  /** Longest the whole shutdown may take (default: the step limit plus 10 s for the closing steps). */
  totalTimeoutMs?: number;
}

export const DEFAULT_SHUTDOWN_STEP_TIMEOUT_MS = 15_000;

/** The longest a shutdown with these options takes from signal to exit. */
export function shutdownBudgetMs(opts: ShutdownOptions = {}): number {
  return opts.totalTimeoutMs ?? (opts.stepTimeoutMs ?? DEFAULT_SHUTDOWN_STEP_TIMEOUT_MS) + 10_000;
}

export function createShutdown(logger: Logger, opts: ShutdownOptions = {}): Shutdown {
  const steps: { name: string; step: () => Promise<unknown> | unknown }[] = [];
  let running: Promise<void> | null = null;
  const stepTimeout = opts.stepTimeoutMs ?? DEFAULT_SHUTDOWN_STEP_TIMEOUT_MS;
  const budget = shutdownBudgetMs(opts);

  const run = (reason: string) => {
    running ??= (async () => {
      logger.info("shutting down", { reason, budgetMs: budget });
      const deadline = Date.now() + budget;
      for (const { name, step } of steps) {
        const timeout = Math.min(stepTimeout, deadline - Date.now());
        if (timeout <= 0) {
          logger.error("shutdown step skipped: shutdown time used up", { step: name, budgetMs: budget });
          continue;
        }
        let timer: Timer | undefined;
        try {
          await Promise.race([
            Promise.resolve().then(step),
            new Promise((_, reject) => {
              timer = setTimeout(() => reject(new Error(`timed out after ${timeout} ms`)), timeout);
            }),
          ]);
          logger.debug("shutdown step done", { step: name });
        } catch (err) {
          logger.error("shutdown step failed", { step: name, err });
        } finally {
          clearTimeout(timer);
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
