import { expect, test } from "bun:test";
import { createPacer } from "./pacer.ts";

function clock() {
  let t = 1_000_000;
  return { now: () => t, sleep: async (ms: number) => void (t += ms), at: () => t };
}

test("requests are spaced evenly under the per-minute budget, whatever the number of workers", async () => {
  const c = clock();
  const pacer = createPacer({ requestsPerMinute: 600, now: c.now, sleep: c.sleep });
  const start = c.at();
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    await pacer.acquire();
    times.push(c.at() - start);
  }
  expect(times).toEqual([0, 100, 200, 300, 400]);
});

test("a pause (429) holds every request until it ends", async () => {
  const c = clock();
  const pacer = createPacer({ requestsPerMinute: 0, now: c.now, sleep: c.sleep });
  await pacer.acquire();
  pacer.pauseFor(5000);
  const before = c.at();
  await pacer.acquire();
  expect(c.at() - before).toBe(5000);
});

test("no budget (0) means no waiting", async () => {
  const c = clock();
  const pacer = createPacer({ requestsPerMinute: 0, now: c.now, sleep: c.sleep });
  for (let i = 0; i < 100; i++) await pacer.acquire();
  expect(c.at()).toBe(1_000_000);
});
