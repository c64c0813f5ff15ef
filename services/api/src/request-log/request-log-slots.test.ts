import { describe, expect, test } from "bun:test";
import { REQUEST_LOG_DAYS, REQUEST_LOG_SLOTS, requestLogSlot, slotToEmpty, utcDayNumber } from "./request-log-slots.ts";

const DAY_MS = 86_400_000;

describe("the request log's ring of daily slots", () => {
  test("a UTC day goes to one slot, from its first to its last millisecond, and the next day to the next slot", () => {
    const midnight = Date.UTC(2025, 5, 1);
    expect(requestLogSlot(midnight)).toBe(requestLogSlot(midnight + DAY_MS - 1));
    expect(requestLogSlot(midnight + DAY_MS)).toBe((requestLogSlot(midnight) + 1) % REQUEST_LOG_SLOTS);
  });

  test("the slot emptied today holds no request of the last 7 days, whatever the time of day", () => {
    for (const hour of [0, 1, 12, 23.99]) {
      const now = Date.UTC(2025, 5, 1) + hour * 3_600_000;
      const emptied = slotToEmpty(now);
      // Every millisecond of the kept window (now - 7 days … now) lies in another slot.
      for (let t = now - REQUEST_LOG_DAYS * DAY_MS; t <= now; t += 3_600_000)
        expect(requestLogSlot(t)).not.toBe(emptied);
      // …and the slot holds the day eight days ago, which has left the window.
      expect(requestLogSlot(now - 8 * DAY_MS)).toBe(emptied);
      expect(utcDayNumber(now - 8 * DAY_MS) + 1).toBeLessThanOrEqual(utcDayNumber(now - REQUEST_LOG_DAYS * DAY_MS));
    }
  });
});
