import { expect, test } from "bun:test";
import { silentLogger } from "./logger.ts";
import { retryUntilDone } from "./retry-until.ts";

test("a failing boot step is retried with growing delays until it succeeds", async () => {
  const delays: number[] = [];
  let calls = 0;
  const result = await retryUntilDone(
    "step",
    async () => {
      if (++calls < 4) throw new Error("down");
      return "up";
    },
    { logger: silentLogger, initialDelayMs: 100, maxDelayMs: 300, sleep: async (ms) => void delays.push(ms) },
  );
  expect(result).toBe("up");
  expect(calls).toBe(4);
  expect(delays).toHaveLength(3);
  // Jitter is ±20 %; the third delay is capped at maxDelayMs.
  expect(delays[0]).toBeGreaterThanOrEqual(80);
  expect(delays[1]).toBeGreaterThanOrEqual(160);
  expect(delays[2]).toBeLessThanOrEqual(360);
});

test("a boot step stops retrying when the service is stopping", async () => {
  let stopping = false;
  let calls = 0;
  const result = await retryUntilDone(
    "step",
    async () => {
      calls++;
      stopping = true;
      throw new Error("down");
    },
    { logger: silentLogger, isStopping: () => stopping, sleep: async () => {} },
  );
  expect(result).toBeUndefined();
  expect(calls).toBe(1);
});
