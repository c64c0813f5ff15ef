import { describe, expect, test } from "bun:test";
import { backoffDelay, createSupervisor, type SupervisedChild } from "./supervisor.ts";

const bun = process.execPath;

/** A real child process running `code` with Bun; its stdout lines are collected. */
function child(code: string, stdout: string[] = []): SupervisedChild {
  const proc = Bun.spawn([bun, "-e", code], { stdout: "pipe", stderr: "ignore" });
  void (async () => {
    for await (const chunk of proc.stdout) stdout.push(...new TextDecoder().decode(chunk).split("\n").filter(Boolean));
  })();
  return { exited: proc.exited, kill: (signal) => proc.kill(signal) };
}

async function until(what: string, check: () => boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

describe("backoffDelay", () => {
  test("starts at one second, doubles, and stops growing at thirty seconds", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20].map((n) => backoffDelay(n))).toEqual([
      1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000,
    ]);
  });
});

describe("supervisor", () => {
  test("restarts a service that exits, with doubling delays up to the cap, says so, and leaves the others running", async () => {
    const delays: number[] = [];
    const logs: string[] = [];
    const spawned: string[] = [];
    const steadyOutput: string[] = [];
    const supervisor = createSupervisor({
      services: [{ name: "crasher" }, { name: "steady" }],
      spawn: (s) => {
        spawned.push(s.name);
        return s.name === "crasher"
          ? child("process.exit(3)")
          : child(
              "process.on('SIGTERM', () => process.exit(0)); console.log('up'); setInterval(() => {}, 1000)",
              steadyOutput,
            );
      },
      sleep: async (ms) => void delays.push(ms),
      log: (line) => logs.push(line),
      backoff: { initialMs: 1000, maxMs: 4000, resetAfterMs: 60_000 },
    });
    supervisor.start();
    await until("five runs of the crashing service", () => spawned.filter((n) => n === "crasher").length >= 5);
    await supervisor.stop();

    expect(delays.slice(0, 4)).toEqual([1000, 2000, 4000, 4000]);
    expect(logs[0]).toBe(
      "start: crasher exited with code 3; restarting it in 1 s (restart 1); the other services keep running",
    );
    expect(logs).toContain("start: restarting crasher");
    expect(logs.some((l) => l.includes("restarting it in 4 s (restart 4)"))).toBe(true);
    // The healthy service was started once and never restarted because its neighbour crashed.
    expect(spawned.filter((n) => n === "steady")).toEqual(["steady"]);
    expect(logs.some((l) => l.startsWith("start: steady"))).toBe(false);
  }, 30_000);

  test("goes back to the first delay after a run that lasted longer than the reset time", async () => {
    let clock = 0;
    let runs = 0;
    const delays: number[] = [];
    const supervisor = createSupervisor({
      services: [{ name: "flaky" }],
      spawn: () => {
        runs += 1;
        // The third run "lasts" 90 s on the injected clock before it exits.
        if (runs === 3) clock += 90_000;
        return child("process.exit(1)");
      },
      sleep: async (ms) => void delays.push(ms),
      log: () => {},
      now: () => clock,
      backoff: { initialMs: 1000, maxMs: 30_000, resetAfterMs: 60_000 },
    });
    supervisor.start();
    await until("four runs", () => runs >= 4);
    await supervisor.stop();
    expect(delays.slice(0, 3)).toEqual([1000, 2000, 1000]);
  }, 30_000);

  test("stop sends SIGTERM, lets the service finish its own shutdown, and restarts nothing", async () => {
    const output: string[] = [];
    const logs: string[] = [];
    let runs = 0;
    let exitCode: number | undefined;
    const supervisor = createSupervisor({
      services: [{ name: "api" }],
      spawn: () => {
        runs += 1;
        const c = child(
          "process.on('SIGTERM', () => { console.log('graceful'); process.exit(0); }); console.log('up'); setInterval(() => {}, 1000)",
          output,
        );
        void c.exited.then((code) => (exitCode = code));
        return c;
      },
      sleep: (ms) => Bun.sleep(ms),
      log: (line) => logs.push(line),
    });
    supervisor.start();
    await until("the service to be up", () => output.includes("up"));
    await supervisor.stop();
    expect(exitCode).toBe(0);
    await until("its last output", () => output.includes("graceful"));
    await Bun.sleep(200);
    expect(runs).toBe(1);
    expect(logs).toEqual([]);
  }, 30_000);

  test("stop kills a service that ignores SIGTERM once the stop timeout has passed", async () => {
    const output: string[] = [];
    const logs: string[] = [];
    let exitCode: number | undefined;
    const supervisor = createSupervisor({
      services: [{ name: "stubborn" }],
      spawn: () => {
        const c = child("process.on('SIGTERM', () => {}); console.log('up'); setInterval(() => {}, 1000)", output);
        void c.exited.then((code) => (exitCode = code));
        return c;
      },
      sleep: (ms) => Bun.sleep(ms),
      log: (line) => logs.push(line),
      stopTimeoutMs: 300,
    });
    supervisor.start();
    await until("the service to be up", () => output.includes("up"));
    const started = Date.now();
    await supervisor.stop();
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(exitCode).toBe(128 + 9);
    expect(logs).toEqual(["start: services still running after 0.3 s; killing them"]);
  }, 30_000);

  test("stop during a back-off wait cancels the pending restart", async () => {
    let runs = 0;
    const logs: string[] = [];
    const supervisor = createSupervisor({
      services: [{ name: "leads" }],
      spawn: () => {
        runs += 1;
        return child("process.exit(2)");
      },
      sleep: () => new Promise<void>(() => {}), // a back-off that would never end by itself
      log: (line) => logs.push(line),
    });
    supervisor.start();
    await until("the first exit to be reported", () => logs.length > 0);
    await supervisor.stop();
    await Bun.sleep(100);
    expect(runs).toBe(1);
    expect(logs).toEqual([
      "start: leads exited with code 2; restarting it in 1 s (restart 1); the other services keep running",
    ]);
  }, 30_000);
});
