import { expect, test } from "bun:test";
import { silentLogger } from "./logger.ts";
import { OUTAGE_BACKOFF, OutageWaitAbandoned, outageDelayMs, waitOutOutage } from "./outage-wait.ts";

test("the outage back-off doubles from its base and never exceeds its cap, however long the outage", () => {
  const mid = () => 0.5;
  expect(outageDelayMs(1, OUTAGE_BACKOFF, mid)).toBe(1_000);
  expect(outageDelayMs(2, OUTAGE_BACKOFF, mid)).toBe(2_000);
  expect(outageDelayMs(5, OUTAGE_BACKOFF, mid)).toBe(16_000);
  for (const n of [6, 10, 100, 10_000])
    for (const r of [0, 0.5, 0.999]) expect(outageDelayMs(n, OUTAGE_BACKOFF, () => r)).toBeLessThanOrEqual(30_000);
  expect(outageDelayMs(100, OUTAGE_BACKOFF, () => 0)).toBe(24_000);
});

test("an outage is waited out, counted and logged; the step's result comes back once the dependency answers", async () => {
  const delays: number[] = [];
  const waited: string[] = [];
  const waiting: number[] = [];
  let calls = 0;
  const result = await waitOutOutage(
    async () => {
      if (++calls <= 5) throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
      return "stored";
    },
    {
      dependency: "storage",
      what: "storing",
      isOutage: (err) => (err as { code?: string }).code === "ECONNREFUSED",
      logger: silentLogger,
      backoff: { baseMs: 100, maxMs: 300 },
      metrics: { waited: (d) => waited.push(d), waiting: (_d, delta) => waiting.push(delta) },
      sleep: async (ms) => void delays.push(ms),
    },
  );
  expect(result).toBe("stored");
  expect(calls).toBe(6);
  expect(waited).toEqual(["storage", "storage", "storage", "storage", "storage"]);
  expect(waiting).toEqual([1, -1]);
  expect(Math.max(...delays)).toBeLessThanOrEqual(300);
});

test("an error that is not an outage is the caller's at once; a stop ends the wait with OutageWaitAbandoned", async () => {
  const opts = {
    dependency: "postgres",
    what: "recording",
    isOutage: (err: unknown) => (err as Error).message === "down",
    logger: silentLogger,
    sleep: async () => {},
  };
  let calls = 0;
  await expect(waitOutOutage(async () => (calls++, Promise.reject(new Error("syntax error"))), opts)).rejects.toThrow(
    "syntax error",
  );
  expect(calls).toBe(1);
  let stopping = false;
  const abandoned = waitOutOutage(
    async () => {
      calls++;
      if (calls > 4) stopping = true;
      throw new Error("down");
    },
    { ...opts, isStopping: () => stopping },
  );
  await expect(abandoned).rejects.toBeInstanceOf(OutageWaitAbandoned);
});
