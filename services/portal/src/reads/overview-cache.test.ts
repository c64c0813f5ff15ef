import { describe, expect, test } from "bun:test";
import type { Overview } from "./overview-reads.ts";
import { createOverviewCache } from "./overview-cache.ts";

const scope = { partnerId: "p", mode: "live" as const, leadAccess: false };
const overview = (listings: number) => ({ listings }) as unknown as Overview;

describe("the overview cache", () => {
  test("computes once per time-to-live, shared by the views that ask meanwhile", async () => {
    let clock = 0;
    let computed = 0;
    const cache = createOverviewCache({ ttlMs: 10_000, now: () => clock, compute: async () => overview(++computed) });
    const [a, b] = await Promise.all([cache.get(scope), cache.get(scope)]);
    expect([a.overview.listings, b.overview.listings, computed]).toEqual([1, 1, 1]);
    clock = 9_999;
    expect((await cache.get(scope)).overview.listings).toBe(1);
    clock = 10_000;
    expect((await cache.get(scope)).overview.listings).toBe(2);
    // Another mode, or another lead access, is its own entry.
    expect((await cache.get({ ...scope, leadAccess: true })).overview.listings).toBe(3);
  });

  test("with a time-to-live of 0 every view computes; a failure is not kept", async () => {
    let computed = 0;
    const off = createOverviewCache({ ttlMs: 0, compute: async () => overview(++computed) });
    await off.get(scope);
    await off.get(scope);
    expect(computed).toBe(2);
    let fail = true;
    const flaky = createOverviewCache({
      ttlMs: 60_000,
      compute: async () => {
        if (fail) throw new Error("database down");
        return overview(7);
      },
    });
    await expect(flaky.get(scope)).rejects.toThrow("database down");
    fail = false;
    expect((await flaky.get(scope)).overview.listings).toBe(7);
  });
});
