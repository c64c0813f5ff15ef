// Log lines of in-process services kept for assertions: exactly the JSON lines each would write to stdout.
import { createLogger, type Logger } from "@pss/service-kit";

export type LogLine = Record<string, unknown> & { msg: string; service: string; level: string };

export interface CapturedLogs {
  /** A logger for one service whose lines are kept (and printed too when TEST_LOGS is set). */
  logger(service: string, level?: "debug" | "info"): Logger;
  /** The raw lines written so far, of one service or of all. */
  raw(service?: string): string[];
  /** The parsed lines written so far, of one service or of all. */
  lines(service?: string): LogLine[];
  /** What `grep <text>` over every service's log finds, parsed. */
  grep(text: string): LogLine[];
}

export function captureLogs(): CapturedLogs {
  const written: { service: string; line: string }[] = [];
  const raw = (service?: string) =>
    written.filter((w) => service === undefined || w.service === service).map((w) => w.line);
  return {
    logger(service, level = "info") {
      return createLogger({
        service,
        level,
        write: (line) => {
          written.push({ service, line });
          if (process.env.TEST_LOGS) console.log(line);
        },
      });
    },
    raw,
    lines: (service) => raw(service).map((l) => JSON.parse(l) as LogLine),
    grep: (text) =>
      raw()
        .filter((l) => l.includes(text))
        .map((l) => JSON.parse(l) as LogLine),
  };
}
