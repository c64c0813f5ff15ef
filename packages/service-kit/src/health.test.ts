import { expect, test } from "bun:test";
import { createHealthRoutes, createReadinessMonitor } from "./health.ts";

test("a check runs at most once per interval however many probes arrive", async () => {
  let clock = 0;
  let runs = 0;
  const monitor = createReadinessMonitor({
    checks: { postgres: { run: async () => void runs++, everyMs: 1000 } },
    now: () => clock,
  });
  await Promise.all([monitor.report(), monitor.report(), monitor.report()]);
  await monitor.report();
  expect(runs).toBe(1);
  clock = 1500;
  await monitor.report();
  expect(runs).toBe(2);
});

test("an optional check failing degrades readiness without failing it; a required one fails it", async () => {
  const monitor = createReadinessMonitor({
    checks: {
      postgres: async () => {},
      kafka: { run: async () => Promise.reject(new Error("ECONNREFUSED 127.0.0.1:9092")), required: false },
    },
  });
  expect(await monitor.report()).toEqual({
    ready: true,
    checks: { postgres: "ok", kafka: "failing" },
    degraded: ["kafka"],
  });

  const down = createReadinessMonitor({
    checks: { postgres: async () => Promise.reject(new Error("connect ECONNREFUSED")) },
  });
  expect(await down.report()).toEqual({ ready: false, checks: { postgres: "failing" }, degraded: [] });
});

test("a check that does not answer counts as failing after its timeout", async () => {
  const started = performance.now();
  const monitor = createReadinessMonitor({ checks: { postgres: { run: () => new Promise(() => {}), timeoutMs: 50 } } });
  expect((await monitor.report()).ready).toBe(false);
  expect(performance.now() - started).toBeLessThan(1000);
});

test("/readyz answers check names with ok/failing only, never the driver's error text", async () => {
  const failures: string[] = [];
  const app = createHealthRoutes({
    service: "svc",
    checks: {
      postgres: async () => Promise.reject(new Error("password authentication failed for user pss at 10.0.0.5")),
    },
    onCheckFailure: (name, err) => failures.push(`${name}: ${(err as Error).message}`),
  });
  const res = await app.handle(new Request("http://localhost/readyz"));
  expect(res.status).toBe(503);
  const text = await res.text();
  expect(JSON.parse(text)).toEqual({ status: "not ready", service: "svc", checks: { postgres: "failing" } });
  expect(text).not.toContain("password");
  expect(failures).toEqual(["postgres: password authentication failed for user pss at 10.0.0.5"]);
});

test("an optional check slow to answer its first run is left out instead of delaying the probe", async () => {
  const monitor = createReadinessMonitor({
    checks: { postgres: async () => {}, kafka: { run: () => Bun.sleep(2000), required: false, timeoutMs: 3000 } },
  });
  const started = performance.now();
  expect(await monitor.report()).toEqual({ ready: true, checks: { postgres: "ok" }, degraded: [] });
  expect(performance.now() - started).toBeLessThan(1000);
});
