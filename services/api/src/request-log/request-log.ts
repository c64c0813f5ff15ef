// The partner API's request log (issue 42; docs/portal.md "API requests"): one row per request a key authenticated,
// read by the partner portal. A request only appends a small record to memory (no I/O, never throws); a flusher
// writes what is buffered every `flushIntervalMs` in one statement (and the day's counts in a second), so the log
// costs the request path almost nothing (measured in the partner-writes benchmark, docs/benchmarks.md).
//
// Nothing a partner sent or got in a successful answer is kept: method, path and query, status, duration, the key
// and the request ID; for a 4xx also the error answer (which says what was wrong, never a secret). While PostgreSQL
// is unreachable records wait in memory, at most `maxBuffered` (the oldest are then dropped and counted in a log
// line); a process that dies loses what it had not written yet (at most one interval's worth): the log is for
// people looking into what happened, not a ledger.
import type postgres from "postgres";
import type { Logger } from "@pss/service-kit";
import { requestLogSlot } from "./request-log-slots.ts";

export interface RequestLogEntry {
  /** When the request arrived (ms since the epoch). */
  at: number;
  partnerId: string;
  mode: "live" | "test";
  keyId: string;
  method: string;
  /** Path and query as sent (at most MAX_PATH characters kept). */
  path: string;
  status: number;
  durationMs: number;
  requestId: string;
  /** The error answer of a 4xx (the JSON body the partner got); null otherwise. */
  error: unknown;
}

export interface RequestLog {
  /** Appends one request. Synchronous, no I/O, never throws. */
  record(entry: RequestLogEntry): void;
  start(): void;
  /** Stops the timer and makes a last attempt to write what is buffered. */
  stop(): Promise<void>;
  /** Writes what is buffered now (tests, shutdown). */
  flush(): Promise<void>;
  /** Records waiting to be written. */
  backlog(): number;
}

export const MAX_PATH = 1000;
/** An error answer is kept up to this many characters of its JSON (a validation answer lists its details). */
export const MAX_ERROR_CHARS = 4000;
const DAY_MS = 86_400_000;

export interface RequestLogOptions {
  sql: postgres.Sql;
  logger: Logger;
  /** Default 1000 ms. */
  flushIntervalMs?: number;
  /** Records held while PostgreSQL does not answer (default 50,000, about 15 MB). */
  maxBuffered?: number;
  /** Records per statement (default 5,000). */
  batchSize?: number;
}

/**
 * The error answer as stored: the JSON the partner got (the error mapper's body is its text), cut to
 * MAX_ERROR_CHARS (then kept as its text in `truncated`).
 */
export function storedError(body: unknown): unknown {
  if (body === null || body === undefined) return null;
  const text = typeof body === "string" ? body : JSON.stringify(body);
  if (text.length > MAX_ERROR_CHARS) return { truncated: text.slice(0, MAX_ERROR_CHARS) };
  if (typeof body !== "string") return body;
  try {
    return JSON.parse(body);
  } catch {
    return { text: body };
  }
}

export function createRequestLog(opts: RequestLogOptions): RequestLog {
  const log = opts.logger.child({ component: "request-log" });
  const flushIntervalMs = opts.flushIntervalMs ?? 1000;
  const maxBuffered = opts.maxBuffered ?? 50_000;
  const batchSize = opts.batchSize ?? 5000;
  let buffer: RequestLogEntry[] = [];
  let dropped = 0;
  let timer: ReturnType<typeof setInterval> | null = null;
  let flushing: Promise<void> | null = null;

  async function write(batch: RequestLogEntry[]): Promise<void> {
    const slots: number[] = [];
    const ats: string[] = [];
    const partners: string[] = [];
    const modes: string[] = [];
    const keys: string[] = [];
    const methods: string[] = [];
    const paths: string[] = [];
    const statuses: number[] = [];
    const durations: number[] = [];
    const requestIds: string[] = [];
    const errors: (string | null)[] = [];
    // Per partner, mode and UTC day: requests, 4xx, 5xx.
    const daily = new Map<string, { partner: string; mode: string; day: string; n: number; c: number; s: number }>();
    for (const e of batch) {
      slots.push(requestLogSlot(e.at));
      ats.push(new Date(e.at).toISOString());
      partners.push(e.partnerId);
      modes.push(e.mode);
      keys.push(e.keyId);
      methods.push(e.method);
      paths.push(e.path.length > MAX_PATH ? e.path.slice(0, MAX_PATH) : e.path);
      statuses.push(e.status);
      durations.push(e.durationMs);
      requestIds.push(e.requestId);
      errors.push(e.error === null || e.error === undefined ? null : JSON.stringify(e.error));
      const day = new Date(Math.floor(e.at / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
      const k = `${e.partnerId}|${e.mode}|${day}`;
      let d = daily.get(k);
      if (!d) daily.set(k, (d = { partner: e.partnerId, mode: e.mode, day, n: 0, c: 0, s: 0 }));
      d.n++;
      if (e.status >= 500) d.s++;
      else if (e.status >= 400) d.c++;
    }
    // Rows in key order: instances adding to the same day's counts lock them in one order (no deadlock).
    const counts = [...daily.values()].sort((a, b) =>
      `${a.partner}${a.mode}${a.day}`.localeCompare(`${b.partner}${b.mode}${b.day}`),
    );
    await opts.sql.begin(async (tx) => {
      await tx`
        INSERT INTO api_request_log (slot, at, partner_id, mode, key_id, method, path, status, duration_ms, request_id, error)
        SELECT u.slot, u.at, u.partner_id, u.mode, u.key_id, u.method, u.path, u.status, u.duration_ms, u.request_id, u.error::jsonb
        FROM unnest(${slots}::smallint[], ${ats}::timestamptz[], ${partners}::uuid[], ${modes}::text[], ${keys}::bigint[],
                    ${methods}::text[], ${paths}::text[], ${statuses}::smallint[], ${durations}::real[], ${requestIds}::text[],
                    ${errors}::text[])
             AS u(slot, at, partner_id, mode, key_id, method, path, status, duration_ms, request_id, error)`;
      await tx`
        INSERT INTO api_request_daily AS d (partner_id, mode, day, requests, client_errors, server_errors)
        SELECT * FROM unnest(${counts.map((c) => c.partner)}::uuid[], ${counts.map((c) => c.mode)}::text[], ${counts.map((c) => c.day)}::date[],
                             ${counts.map((c) => c.n)}::int[], ${counts.map((c) => c.c)}::int[], ${counts.map((c) => c.s)}::int[])
        ON CONFLICT (partner_id, mode, day) DO UPDATE SET requests = d.requests + excluded.requests,
          client_errors = d.client_errors + excluded.client_errors, server_errors = d.server_errors + excluded.server_errors`;
    });
  }

  async function flushNow(): Promise<void> {
    while (buffer.length > 0) {
      const batch = buffer.slice(0, batchSize);
      try {
        await write(batch);
      } catch (err) {
        log.warn("writing the request log failed; keeping the records to try again", {
          err: (err as Error).message,
          waiting: buffer.length,
        });
        return;
      }
      // Records appended meanwhile stay; the written ones go (a batch is always the buffer's head).
      buffer = buffer.slice(batch.length);
    }
    if (dropped > 0) {
      log.warn("request log records dropped while the database did not answer", { dropped });
      dropped = 0;
    }
  }

  const flush = (): Promise<void> => {
    flushing ??= flushNow().finally(() => (flushing = null));
    return flushing;
  };

  return {
    record(entry) {
      if (buffer.length >= maxBuffered) {
        buffer.shift();
        dropped++;
      }
      buffer.push(entry);
    },
    start() {
      timer ??= setInterval(() => void flush(), flushIntervalMs);
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await flush();
      // A flush that was running when stop() came may have left what arrived during it.
      if (buffer.length > 0) await flush();
    },
    flush,
    backlog: () => buffer.length,
  };
}
