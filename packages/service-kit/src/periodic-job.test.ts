import { describe, expect, test } from "bun:test";
import { createHeldLease } from "./held-lease.ts";
import type { LeaderLease } from "./leader-lease.ts";
import { createLogger, silentLogger } from "./logger.ts";
import { createPeriodicJob } from "./periodic-job.ts";

const logger = silentLogger;
const until = async (cond: () => boolean, ms = 2000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await Bun.sleep(2);
  }
};

/** A sleep that records each pause and ends only when told to (or woken). */
function fakeClock() {
  const pauses: number[] = [];
  let release: (() => void) | null = null;
  return {
    pauses,
    sleep: (ms: number, wakeUp: Promise<void>) =>
      new Promise<void>((resolve) => {
        pauses.push(ms);
        release = resolve;
        void wakeUp.then(resolve);
      }),
    /** Ends the current pause as if its time had passed. */
    elapse: () => release?.(),
  };
}

describe("createPeriodicJob", () => {
  test("ticks, pauses the interval between ticks, and runs again at once when a tick says more is waiting", async () => {
    const clock = fakeClock();
    const answers = [true, false, false];
    let ticks = 0;
    const job = createPeriodicJob({
      name: "t",
      logger,
      intervalMs: 500,
      firstDelayMs: 50,
      sleep: clock.sleep,
      tick: async () => answers[ticks++] ?? false,
    });
    job.start();
    await until(() => clock.pauses.length === 1);
    expect(ticks).toBe(0); // waiting for the first delay
    clock.elapse();
    // tick 1 says "more": tick 2 follows without a pause, then the interval.
    await until(() => ticks === 2 && clock.pauses.length === 2);
    expect(clock.pauses).toEqual([50, 500]);
    clock.elapse();
    await until(() => ticks === 3 && clock.pauses.length === 3);
    await job.stop();
    expect(clock.pauses).toEqual([50, 500, 500]);
  });

  test("stop() ends the pause and waits for the tick in flight", async () => {
    let finishTick!: () => void;
    let tickEnded = false;
    const job = createPeriodicJob({
      name: "t",
      logger,
      intervalMs: 60_000,
      tick: async () => {
        await new Promise<void>((resolve) => (finishTick = resolve));
        tickEnded = true;
      },
    });
    job.start();
    await until(() => finishTick !== undefined);
    let stopped = false;
    const stopping = job.stop().then(() => (stopped = true));
    await Bun.sleep(20);
    expect(stopped).toBe(false); // the tick is still running
    finishTick();
    await stopping;
    expect(tickEnded).toBe(true);

    // A job in its (one-minute) pause stops at once.
    const idle = createPeriodicJob({ name: "idle", logger, intervalMs: 60_000, tick: async () => {} });
    idle.start();
    await Bun.sleep(10);
    const began = performance.now();
    await idle.stop();
    expect(performance.now() - began).toBeLessThan(1000);
  });

  test("a failing tick is logged and retried after a growing backoff; the loop never ends by itself", async () => {
    const clock = fakeClock();
    const lines: string[] = [];
    const log = createLogger({ service: "test", level: "warn", write: (line) => lines.push(line) });
    let ticks = 0;
    const job = createPeriodicJob({
      name: "t",
      logger: log,
      intervalMs: 1000,
      backoff: { initialMs: 100, maxMs: 300 },
      failureMessage: "t failed; retrying",
      sleep: clock.sleep,
      tick: async () => {
        ticks++;
        if (ticks <= 3) throw new Error(`boom ${ticks}`);
      },
    });
    job.start();
    for (let i = 1; i <= 3; i++) {
      await until(() => clock.pauses.length === i);
      clock.elapse();
    }
    await until(() => ticks === 4 && clock.pauses.length === 4);
    expect(job.isRunning()).toBe(true);
    // 100, 200, 300 (capped), each with up to 20% jitter; after a success, the interval.
    expect(clock.pauses.slice(0, 3).map((ms, i) => ms >= [100, 200, 300][i]! && ms <= [120, 240, 360][i]!)).toEqual([
      true,
      true,
      true,
    ]);
    expect(clock.pauses[3]).toBe(1000);
    await job.stop();
    expect(lines.filter((l) => l.includes("t failed; retrying")).length).toBe(3);
    expect(lines.some((l) => l.includes("boom 2"))).toBe(true);
  });

  test("wake() ends the pause; a wake-up during a tick runs the next tick without a pause", async () => {
    const clock = fakeClock();
    let ticks = 0;
    let job!: ReturnType<typeof createPeriodicJob>;
    job = createPeriodicJob({
      name: "t",
      logger,
      intervalMs: 60_000,
      sleep: clock.sleep,
      tick: async () => {
        ticks++;
        if (ticks === 2) job.wake(); // a NOTIFY arriving while the tick queries
      },
    });
    job.start();
    await until(() => clock.pauses.length === 1);
    expect(ticks).toBe(1);
    job.wake();
    // Tick 2 woke itself: tick 3 follows with no pause in between.
    await until(() => ticks === 3 && clock.pauses.length === 2);
    await job.stop();
    expect(ticks).toBe(3);
  });

  test("with a lease: ticks only while held, stands by otherwise, and releases it at stop", async () => {
    const clock = fakeClock();
    let free = false;
    let held = false;
    const calls: string[] = [];
    const lease: LeaderLease = {
      name: "l",
      holder: "me",
      acquire: async () => {
        calls.push("acquire");
        held = free;
        return held;
      },
      renewIfDue: async () => held,
      isHeld: () => held,
      keepRenewed: () => {
        calls.push("renew");
        return () => calls.push("stop renewing");
      },
      release: async () => {
        calls.push("release");
        held = false;
      },
    };
    const active: boolean[] = [];
    let ticks = 0;
    const job = createPeriodicJob({
      name: "t",
      logger,
      intervalMs: 100,
      standbyMs: 700,
      sleep: clock.sleep,
      lease: createHeldLease({ lease, logger, name: "t", onActive: (on) => active.push(on) }),
      tick: async () => void ticks++,
    });
    job.start();
    await until(() => clock.pauses.length === 1);
    expect(clock.pauses).toEqual([700]);
    expect(ticks).toBe(0);
    free = true;
    clock.elapse();
    await until(() => ticks === 1 && clock.pauses.length === 2);
    expect(clock.pauses[1]).toBe(100);
    await job.stop();
    expect(calls).toEqual(["acquire", "acquire", "renew", "stop renewing", "release"]);
    expect(active).toEqual([true, false]);
  });
});
