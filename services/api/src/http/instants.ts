// Instants in queries and bodies that only bound a search over our own rows (deliveries, feed events).

/**
 * A valid date-time (contracts isDateTime) in milliseconds since the epoch; digits beyond the millisecond round up,
 * so the bounds stay exact for stored (ms) times.
 */
export function parseInstant(value: string): number {
  const ms = Date.parse(value.replace(/([+-]\d{2})(\d{2})$/, "$1:$2"));
  const fraction = /\.(\d+)/.exec(value)?.[1] ?? "";
  return fraction.length > 3 && /[1-9]/.test(fraction.slice(3)) ? ms + 1 : ms;
}

/** Nothing we store predates the Unix epoch: an earlier bound on our rows means "from the beginning". */
export const EARLIEST_RECORD_MS = 0;

/**
 * A valid date-time as a bound on rows we wrote. Nothing of ours predates the Unix epoch, so an earlier bound
 * means "from the beginning" and becomes the epoch: that also keeps it inside PostgreSQL's range, which ends
 * at 4713 BC but has no year 0 in the text form a JavaScript date is sent as (0001-01-01T00:00:00+01:32 is
 * year 0 in UTC; PostgreSQL refused it and the route answered 500).
 */
export function recordBound(value: string): Date {
  return new Date(Math.max(parseInstant(value), EARLIEST_RECORD_MS));
}
