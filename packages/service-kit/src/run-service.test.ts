import { afterEach, describe, expect, test } from "bun:test";
import type { Kafka } from "kafkajs";
import type { HealthRoutesOptions } from "./health.ts";
import { createLogger, silentLogger } from "./logger.ts";
import { bootService, createBootState, startConsuming, type BootEnv, type ServiceParts } from "./run-service.ts";
import { createShutdown } from "./shutdown.ts";

const until = async (cond: () => boolean, ms = 2000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await Bun.sleep(2);
  }
};

/** A health port that only records what it was given and when it stopped. */
function fakeHealth(calls: string[]) {
  let given: HealthRoutesOptions | null = null;
  return {
    options: () => given!,
    start: (opts: HealthRoutesOptions & { port: number }) => {
      given = opts;
      calls.push("health started");
      return { port: opts.port, stop: () => void calls.push("stop health endpoint") };
    },
  };
}

function env(calls: string[], health = fakeHealth(calls), logger = silentLogger): BootEnv {
  return {
    service: "svc",
    logger,
    shutdown: createShutdown(logger),
    healthPort: 1234,
    startHealth: health.start,
    retry: { initialDelayMs: 1, maxDelayMs: 2 },
  };
}

const realExit = process.exit;
afterEach(() => {
  process.exit = realExit;
});

describe("bootService", () => {
  test("shutdown runs in order: not ready and intake, the service's stop steps, the health port, then the clients", async () => {
    const calls: string[] = [];
    const health = fakeHealth(calls);
    const e = env(calls, health);
    const state = createBootState();
    const parts: ServiceParts = {
      clients: {},
      start: { what: "start consuming", run: () => void calls.push("started") },
      stopIntake: () => {
        calls.push(`stop intake (not ready: ${state.isStopping()})`);
      },
      stop: {
        "stop consuming": async () => {
          await Bun.sleep(5); // in-flight work finishing: the next step waits for it
          calls.push("stop consuming");
        },
        "stop job": () => void calls.push("stop job"),
      },
      close: { "close smtp": () => void calls.push("close smtp") },
    };
    await bootService(parts, e, state);
    expect(calls).toEqual(["health started", "started"]);
    expect(health.options().isStopping!()).toBe(false);
    await e.shutdown.run("SIGTERM");
    expect(calls.slice(2)).toEqual([
      "stop intake (not ready: true)",
      "stop consuming",
      "stop job",
      "stop health endpoint",
      "close smtp",
    ]);
    // Readiness answers "stopping" from the first step on.
    expect(health.options().isStopping!()).toBe(true);
  });

  test("start is retried until its dependency answers; readiness fails until then, and started() runs once", async () => {
    const calls: string[] = [];
    const health = fakeHealth(calls);
    let tries = 0;
    let running = false;
    let started = 0;
    const boot = bootService(
      {
        clients: {},
        start: {
          what: "start consuming",
          check: "consumer",
          isRunning: () => running,
          run: async () => {
            // Not ready while start fails.
            if (tries === 0)
              await (health.options().checks.consumer as () => Promise<unknown>)().catch((err: Error) =>
                calls.push(`check: ${err.message}`),
              );
            if (++tries < 4) throw new Error("kafka: connection refused");
            running = true;
          },
        },
        started: () => void started++,
        stop: {},
      },
      env(calls, health),
    );
    await until(() => calls.includes("health started"));
    const consumerCheck = health.options().checks.consumer as () => Promise<unknown>;
    await boot;
    expect(tries).toBe(4);
    expect(started).toBe(1);
    expect(calls).toContain("check: start consuming: not done yet");
    await consumerCheck(); // passes now
    running = false; // the consumer crashed later
    expect(consumerCheck()).rejects.toThrow("not running");
  });

  test("startConsuming starts the consumers once and names the readiness check that follows whether they run", async () => {
    const calls: string[] = [];
    const health = fakeHealth(calls);
    let running = false;
    const consumers = {
      start: async () => {
        calls.push("consumers started");
        running = true;
      },
      isRunning: () => running,
    };
    await bootService({ clients: {}, start: startConsuming(consumers, "consumers"), stop: {} }, env(calls, health));
    expect(calls).toEqual(["health started", "consumers started"]);
    const check = health.options().checks.consumers as () => Promise<unknown>;
    await check();
    running = false;
    expect(check()).rejects.toThrow("not running");
    expect(health.options().checks.consumer).toBeUndefined();
  });

  test("a start that keeps failing never exits the process; the shutdown ends its retries", async () => {
    const calls: string[] = [];
    const lines: string[] = [];
    const logger = createLogger({ service: "svc", level: "warn", write: (l) => lines.push(l) });
    const exits: unknown[] = [];
    process.exit = ((code?: number) => void exits.push(code)) as typeof process.exit;
    const e = env(calls, fakeHealth(calls), logger);
    let tries = 0;
    const state = createBootState();
    const boot = bootService(
      {
        clients: {},
        start: {
          what: "start consuming",
          check: "consumer",
          run: async () => {
            tries++;
            throw new Error("postgres: connection refused");
          },
        },
        started: () => void calls.push("started"),
        stop: { "stop consuming": () => void calls.push("stop consuming") },
      },
      e,
      state,
    );
    await until(() => tries >= 20);
    expect(exits).toEqual([]);
    expect(lines.some((l) => l.includes("start consuming failed; retrying") && l.includes("connection refused"))).toBe(
      true,
    );
    await e.shutdown.run("SIGTERM");
    await boot; // the retries stop once the service is stopping
    await state.booted;
    const after = tries;
    await Bun.sleep(20);
    expect(tries).toBe(after);
    expect(calls).toEqual(["health started", "stop consuming", "stop health endpoint"]);
    expect(exits).toEqual([]);
  });

  test("a check given as null leaves the standard one out; a named check is added", async () => {
    const calls: string[] = [];
    const health = fakeHealth(calls);
    const fakeKafka = {} as unknown as Kafka; // never called: its standard check is left out
    await bootService(
      { clients: { kafka: fakeKafka }, checks: { kafka: null, storage: async () => {} }, stop: {} },
      env(calls, health),
    );
    expect(Object.keys(health.options().checks)).toEqual(["storage"]);
  });
});
