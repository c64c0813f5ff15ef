import { expect, test } from "bun:test";
import { isDependencyUnavailable } from "./dependency-errors.ts";

const withCode = (code: string, message = "x") => Object.assign(new Error(message), { code });

test("connection failures and shutdown/startup SQLSTATEs count as a dependency being unavailable", () => {
  for (const code of [
    "ECONNREFUSED",
    "ECONNRESET",
    "CONNECTION_CLOSED",
    "CONNECT_TIMEOUT",
    "CONNECTION_DESTROYED",
    "57P01",
    "57P03",
    "08006",
    "53300",
  ]) {
    expect(isDependencyUnavailable(withCode(code))).toBe(true);
  }
  expect(isDependencyUnavailable(new Error("wrapped", { cause: withCode("ECONNREFUSED") }))).toBe(true);
});

test("query errors, bugs and non-errors do not count as a dependency being unavailable", () => {
  for (const code of ["23505", "40P01", "22P02", "42P01"]) expect(isDependencyUnavailable(withCode(code))).toBe(false);
  expect(isDependencyUnavailable(new TypeError("x is undefined"))).toBe(false);
  expect(isDependencyUnavailable(null)).toBe(false);
  expect(isDependencyUnavailable("ECONNREFUSED")).toBe(false);
});
