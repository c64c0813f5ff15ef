import { describe, expect, test } from "bun:test";
import {
  DEFAULT_RETRY_SCHEDULE,
  nextRetryDelayMs,
  parseDuration,
  parseRetryAfter,
  parseSchedule,
} from "./retry-schedule.ts";

const S = 1000;
const M = 60 * S;
const H = 60 * M;

test("the default schedule is immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h", () => {
  expect(parseSchedule(DEFAULT_RETRY_SCHEDULE)).toEqual([
    0,
    5 * S,
    5 * M,
    30 * M,
    2 * H,
    5 * H,
    10 * H,
    14 * H,
    20 * H,
    24 * H,
  ]);
});

test("durations and schedules refuse what they cannot read", () => {
  expect(parseDuration("250ms")).toBe(250);
  expect(parseDuration("2d")).toBe(2 * 24 * H);
  expect(parseDuration("0")).toBe(0);
  expect(parseDuration("5")).toBeNull();
  expect(parseDuration("5 minutes")).toBeNull();
  expect(parseDuration("-1s")).toBeNull();
  expect(parseSchedule("0s,1s,,2s")).toBeNull();
  expect(parseSchedule("0,200ms,1s")).toEqual([0, 200, 1000]);
});

describe("nextRetryDelayMs", () => {
  const schedule = parseSchedule(DEFAULT_RETRY_SCHEDULE)!;

  test("after attempt n the next waits the schedule's n-th delay, within ±10% jitter", () => {
    expect(nextRetryDelayMs(schedule, 1, null, () => 0.5)).toBe(5 * S);
    expect(nextRetryDelayMs(schedule, 1, null, () => 0)).toBe(4.5 * S);
    expect(nextRetryDelayMs(schedule, 1, null, () => 0.999999)).toBe(5.5 * S);
    expect(nextRetryDelayMs(schedule, 2, null, () => 0.5)).toBe(5 * M);
    expect(nextRetryDelayMs(schedule, 9, null, () => 0.5)).toBe(24 * H);
  });

  test("after the tenth attempt there is no other", () => {
    expect(nextRetryDelayMs(schedule, 10, null)).toBeNull();
    expect(nextRetryDelayMs(schedule, 11, 1000)).toBeNull();
  });

  test("Retry-After pushes the next attempt later, never earlier", () => {
    expect(nextRetryDelayMs(schedule, 1, 60 * S, () => 0.5)).toBe(60 * S);
    expect(nextRetryDelayMs(schedule, 3, 60 * S, () => 0.5)).toBe(30 * M);
  });
});

test("Retry-After is read as seconds or an HTTP date, capped at a day", () => {
  const now = Date.parse("2024-05-01T12:00:00Z");
  expect(parseRetryAfter("120", now)).toBe(120 * S);
  expect(parseRetryAfter("Wed, 01 May 2024 12:10:00 GMT", now)).toBe(10 * M);
  expect(parseRetryAfter("Wed, 01 May 2024 11:00:00 GMT", now)).toBe(0);
  expect(parseRetryAfter("99999999", now)).toBe(24 * H);
  expect(parseRetryAfter("soon", now)).toBeNull();
  expect(parseRetryAfter(null, now)).toBeNull();
});
