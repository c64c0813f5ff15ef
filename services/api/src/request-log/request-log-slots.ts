// The request log's ring of daily partitions (migration 0045): a row goes to slot (UTC day number) mod SLOTS. Nine
// slots hold today and the eight days before; the slot of tomorrow holds the day eight days ago, wholly older than
// the 7 days kept, and is emptied during today (request-log-retention.ts).
export const REQUEST_LOG_SLOTS = 9;
export const REQUEST_LOG_DAYS = 7;
const DAY_MS = 86_400_000;

export const utcDayNumber = (ms: number) => Math.floor(ms / DAY_MS);
export const requestLogSlot = (ms: number) => utcDayNumber(ms) % REQUEST_LOG_SLOTS;
/** The slot emptied during the day of `ms`: tomorrow's. */
export const slotToEmpty = (ms: number) => (utcDayNumber(ms) + 1) % REQUEST_LOG_SLOTS;
