// When a failed delivery is tried again. The schedule lists the delay before each attempt of a round, the first
// being 0 (immediately); after the last one the delivery has failed. Delays get ±10% jitter so deliveries that
// failed together (a receiver's outage) do not all come back in the same second. A receiver's Retry-After is
// honoured: never earlier than it asks (capped at a day).

/** Standard Webhooks' recommended schedule, as the issue states it. */
export const DEFAULT_RETRY_SCHEDULE = "0s,5s,5m,30m,2h,5h,10h,14h,20h,24h";
export const JITTER = 0.1;
export const MAX_RETRY_AFTER_MS = 24 * 3600 * 1000;

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "500ms", "5s", "5m", "2h", "1d", "0" -> milliseconds; null when it is none of these. */
export function parseDuration(text: string): number | null {
  const m = /^\s*(\d{1,9})\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!m) return null;
  if (!m[2]) return Number(m[1]) === 0 ? 0 : null;
  return Number(m[1]) * UNITS[m[2]]!;
}

/** A comma-separated list of 1 to 50 durations; null when any entry is not one. */
export function parseSchedule(text: string): number[] | null {
  const parts = text.split(",");
  if (parts.length < 1 || parts.length > 50) return null;
  const delays = parts.map(parseDuration);
  return delays.every((d): d is number => d !== null) ? delays : null;
}

/**
 * Retry-After as seconds or an HTTP date, in milliseconds from `now`; null when absent or unreadable. A date in
 * the past is 0.
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | null {
  if (!value) return null;
  const v = value.trim();
  if (/^\d{1,10}$/.test(v)) return Math.min(Number(v) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(v);
  if (Number.isNaN(at) || !/[a-z]/i.test(v)) return null;
  return Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}

/**
 * After attempt `attemptInRound` (1-based) of a round failed: the delay before the next attempt, or null when
 * the schedule is used up.
 */
export function nextRetryDelayMs(
  schedule: readonly number[],
  attemptInRound: number,
  retryAfterMs: number | null,
  random: () => number = Math.random,
): number | null {
  if (attemptInRound >= schedule.length) return null;
  const base = schedule[attemptInRound]!;
  const jittered = Math.round(base * (1 - JITTER + random() * 2 * JITTER));
  return Math.max(jittered, retryAfterMs ?? 0);
}
