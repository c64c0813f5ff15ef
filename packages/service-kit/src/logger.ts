// Structured JSON logs, one object per line. Never pass API keys, full e-mail addresses or lead bodies.
// As a safety net every string written (messages, fields, error messages and stacks) goes through
// redactSecrets: URL passwords, secret query parameters, bearer tokens and e-mail addresses are masked.
import type { LogLevel } from "./config.ts";
import { redactSecrets } from "./redact.ts";

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
  /** Lets hot paths skip building fields for a line that would be dropped. */
  enabled(level: LogLevel): boolean;
}

export function createLogger(opts: {
  service: string;
  level?: LogLevel;
  write?: (line: string) => void;
  base?: LogFields;
}): Logger {
  const min = ORDER[opts.level ?? "info"];
  const write = opts.write ?? ((line: string) => process.stdout.write(line + "\n"));
  const base = { service: opts.service, ...opts.base };
  const log = (level: LogLevel, msg: string, fields?: LogFields) => {
    if (ORDER[level] < min) return;
    // Redacting the finished line (its strings end at quotes, which the patterns never cross) costs one scan.
    write(
      redactSecrets(
        JSON.stringify({ time: new Date().toISOString(), level, msg, ...base, ...serializeErrors(fields) }),
      ),
    );
  };
  return {
    debug: (m, f) => log("debug", m, f),
    info: (m, f) => log("info", m, f),
    warn: (m, f) => log("warn", m, f),
    error: (m, f) => log("error", m, f),
    child: (fields) => createLogger({ ...opts, base: { ...opts.base, ...fields } }),
    enabled: (level) => ORDER[level] >= min,
  };
}

function serializeErrors(fields?: LogFields): LogFields | undefined {
  if (!fields) return fields;
  const out: LogFields = {};
  for (const [k, v] of Object.entries(fields)) {
    out[k] = v instanceof Error ? { name: v.name, message: v.message, stack: v.stack } : v;
  }
  return out;
}

/** "jane.doe@example.com" -> "j***@example.com": enough to correlate, not enough to harvest. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf("@");
  if (at <= 0) return "***";
  return `${email[0]}***${email.slice(at)}`;
}

export const silentLogger: Logger = createLogger({ service: "test", write: () => {} });
