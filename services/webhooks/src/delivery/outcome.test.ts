import { expect, test } from "bun:test";
import { decide, isDatabaseOutage, ourFailure, SecretUnreadable } from "./outcome.ts";

const schedule = [0, 5000, 300_000];
const half = () => 0.5;

test("a 2xx delivers", () => {
  expect(decide({ statusCode: 204, error: null, retryAfterMs: null }, 1, schedule)).toEqual({ status: "delivered" });
});

test("a 500, a timeout or a refused connection is tried again on the schedule until it is used up", () => {
  expect(decide({ statusCode: 500, error: "HTTP 500", retryAfterMs: null }, 1, schedule, half)).toEqual({
    status: "pending",
    delayMs: 5000,
  });
  expect(
    decide({ statusCode: null, error: "timed out after 10000 ms", retryAfterMs: null }, 2, schedule, half),
  ).toEqual({ status: "pending", delayMs: 300_000 });
  expect(decide({ statusCode: null, error: "connection refused", retryAfterMs: null }, 3, schedule, half)).toEqual({
    status: "failed",
    gone: false,
  });
});

test("Retry-After from a 429 or 503 delays the next attempt", () => {
  expect(decide({ statusCode: 429, error: "HTTP 429", retryAfterMs: 60_000 }, 1, schedule, half)).toEqual({
    status: "pending",
    delayMs: 60_000,
  });
});

test("410 fails at once and marks the endpoint gone, whatever attempts are left", () => {
  expect(decide({ statusCode: 410, error: "HTTP 410", retryAfterMs: 5000 }, 1, schedule)).toEqual({
    status: "failed",
    gone: true,
  });
});

test("ourFailure: PostgreSQL unreachable and an unreadable signing secret are ours (no attempt spent); anything else is not", () => {
  for (const code of ["ECONNREFUSED", "CONNECTION_CLOSED", "57P01", "53300"]) {
    expect(ourFailure(Object.assign(new Error("pg"), { code }))).toBe("postgres");
    expect(isDatabaseOutage(Object.assign(new Error("pg"), { code }))).toBe(true);
  }
  expect(ourFailure(new SecretUnreadable(new Error("unsupported state or unable to authenticate data")))).toBe(
    "configuration",
  );
  expect(isDatabaseOutage(new SecretUnreadable(new Error("x")))).toBe(false);
  for (const err of [Object.assign(new Error("dup"), { code: "23505" }), new TypeError("x is undefined"), null])
    expect(ourFailure(err)).toBeNull();
});
