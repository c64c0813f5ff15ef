// Last resort: an exception or rejection nobody caught is logged as one JSON line and the process keeps serving.
// Client libraries have thrown from timers when a server went away (see patches/); one such bug must not take
// every request down with it. runService() (run-service.ts) installs this once, right after creating the logger.
import type { Logger } from "./logger.ts";

export interface CrashGuard {
  /** How many uncaught failures were seen (exposed for tests and diagnostics). */
  count(): number;
  uninstall(): void;
}

export function installCrashGuard(logger: Logger): CrashGuard {
  let seen = 0;
  const describe = (reason: unknown) =>
    reason instanceof Error
      ? { name: reason.name, message: reason.message, stack: reason.stack }
      : { message: String(reason) };
  const onException = (err: unknown) => {
    seen++;
    logger.error("uncaught exception; continuing", { err: describe(err), uncaughtCount: seen });
  };
  const onRejection = (reason: unknown) => {
    seen++;
    logger.error("unhandled promise rejection; continuing", { err: describe(reason), uncaughtCount: seen });
  };
  process.on("uncaughtException", onException);
  process.on("unhandledRejection", onRejection);
  return {
    count: () => seen,
    uninstall() {
      process.off("uncaughtException", onException);
      process.off("unhandledRejection", onRejection);
    },
  };
}
