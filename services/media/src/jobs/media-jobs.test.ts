import { expect, test } from "bun:test";
import { retryDelayMs } from "./media-jobs.ts";

test("retry delays double per attempt, with ±25% jitter", () => {
  expect([1, 2, 3, 4].map((n) => retryDelayMs(n, 1000, () => 0.5))).toEqual([1000, 2000, 4000, 8000]);
  expect(retryDelayMs(3, 1000, () => 0)).toBe(3000);
  expect(retryDelayMs(3, 1000, () => 0.999999)).toBe(5000);
});
