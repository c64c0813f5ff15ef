import { expect, test } from "bun:test";
import { createInterruptibleSleep } from "./interruptible-sleep.ts";

test("wake() ends a long sleep at once; without it the sleep lasts its time", async () => {
  const s = createInterruptibleSleep();
  const began = performance.now();
  const sleeping = s.sleep(10_000);
  setTimeout(() => s.wake(), 20);
  await sleeping;
  expect(performance.now() - began).toBeLessThan(1000);
  const short = performance.now();
  await s.sleep(30);
  expect(performance.now() - short).toBeGreaterThanOrEqual(25);
  s.wake(); // nothing to wake: harmless
});
