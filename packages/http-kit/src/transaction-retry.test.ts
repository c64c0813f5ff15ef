import { describe, expect, test } from "bun:test";
import { ContendedWriteError, isRetryableConflict, retryTransaction } from "./transaction-retry.ts";

const pgError = (code: string) => Object.assign(new Error(`postgres ${code}`), { code });

describe("retryTransaction", () => {
  test("retries deadlocks and serialization failures, then returns the successful attempt's result", async () => {
    const failures = [pgError("40P01"), pgError("40001")];
    const delays: number[] = [];
    let calls = 0;
    const result = await retryTransaction(
      async () => {
        calls++;
        const next = failures.shift();
        if (next) throw next;
        return "stored";
      },
      { sleep: async (ms) => void delays.push(ms), random: () => 1 },
    );
    expect(result).toBe("stored");
    expect(calls).toBe(3);
    // Exponential, capped, from the jitter's upper bound (random() = 1).
    expect(delays).toEqual([20, 40]);
  });

  test("jitter spreads the delay between zero and the exponential bound", async () => {
    const delays: number[] = [];
    let calls = 0;
    await retryTransaction(
      async () => {
        if (++calls < 3) throw pgError("40P01");
      },
      { sleep: async (ms) => void delays.push(ms), random: () => 0.5, baseDelayMs: 100, maxDelayMs: 300 },
    );
    expect(delays).toEqual([100, 150]);
  });

  test("gives up after the bounded number of attempts with a 503 that says to retry", async () => {
    let calls = 0;
    const error = await retryTransaction(
      async () => {
        calls++;
        throw pgError("40P01");
      },
      { attempts: 4, sleep: async () => {} },
    ).catch((e) => e);
    expect(calls).toBe(4);
    expect(error).toBeInstanceOf(ContendedWriteError);
    expect(error.status).toBe(503);
    expect(error.headers).toEqual({ "Retry-After": "1" });
  });

  test("any other error is rethrown at once, unchanged", async () => {
    let calls = 0;
    const unique = pgError("23505");
    const error = await retryTransaction(async () => {
      calls++;
      throw unique;
    }).catch((e) => e);
    expect(error).toBe(unique);
    expect(calls).toBe(1);
    expect(isRetryableConflict(new Error("plain"))).toBe(false);
    expect(isRetryableConflict(null)).toBe(false);
  });
});
