// PostgreSQL stopped for ~12 s under ~16 PUT/s against a real API process (relay on), a real indexer, and the
// media and leads workers.
// npm test: alone: stops and restarts the local PostgreSQL every other file uses
import { afterAll, beforeAll, expect, test } from "bun:test";
import {
  acknowledged,
  guardLines,
  localComponent,
  runOutage,
  startStack,
  verifyWrites,
  waitUntil,
  type Stack,
} from "./support/fault-harness.ts";

const postgres = await localComponent("postgres");
let stack: Stack;

beforeAll(async () => {
  if (postgres) stack = await startStack({ indexer: true, workers: true });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
}, 60_000);

test.skipIf(!postgres)(
  "PostgreSQL down: every process keeps running, requests get 503 JSON with Retry-After within 2 s, and everything recovers by itself",
  async () => {
    const { answers, whileDown, probes, recoveryMs } = await runOutage(stack, postgres!, {
      outageMs: 12_000,
      perSecond: 16,
    });

    for (const p of [stack.api, stack.indexer!, ...stack.workers]) {
      expect([p.name, p.exitCode()]).toEqual([p.name, null]);
      expect(guardLines(p)).toEqual([]);
    }

    // Never a 500, a hang or a dropped connection: 2xx, or 503 in the error shape with Retry-After.
    expect(
      answers.filter((a) => a.status !== 503 && !acknowledged(a)).map((a) => `${a.status} ${JSON.stringify(a.body)}`),
    ).toEqual([]);
    for (const a of answers.filter((x) => x.status === 503)) {
      expect(a.body).toEqual({ status: "error", error: expect.stringContaining("temporarily unavailable") });
      expect(Number(a.retryAfter)).toBeGreaterThan(0);
    }
    expect(whileDown.length).toBeGreaterThan(30);
    expect(whileDown.filter((a) => a.status !== 503)).toEqual([]);
    // Bounded answers throughout: also while it stops and starts.
    expect(answers.filter((a) => a.ms > 2000).map((a) => Math.round(a.ms))).toEqual([]);

    // Probes answer at once and say only which check fails.
    expect(probes.length).toBeGreaterThanOrEqual(8);
    for (const p of probes) expect(p.ms).toBeLessThan(2000);
    expect(JSON.parse(probes.find((p) => p.path === "/readyz")!.body)).toEqual({
      status: "not ready",
      service: "api",
      checks: expect.objectContaining({ postgres: "failing" }),
    });
    // An authentication PostgreSQL must answer (the key is in no cache) is 503, not 401 or 500; a cached one passes.
    const uncached = probes.filter((p) => p.path === "/partner/v1/health (uncached key)");
    expect(uncached.map((p) => p.status)).toEqual(uncached.map(() => 503));
    expect(JSON.parse(uncached[0]!.body)).toEqual({
      status: "error",
      error: expect.stringContaining("temporarily unavailable"),
    });
    for (const p of probes.filter((x) => x.path === "/partner/v1/health")) expect([200, 503]).toContain(p.status);

    // Back by itself within seconds, ready again, and every acknowledged write stored once, published once per
    // version and indexed.
    expect(recoveryMs).toBeLessThan(10_000);
    expect((await fetch(`${stack.healthUrl}/readyz`)).status).toBe(200);
    for (const p of [stack.indexer!, ...stack.workers]) {
      await waitUntil(
        `${p.name} to be ready again`,
        async () => (await fetch(`http://127.0.0.1:${p.port}/readyz`)).ok,
        20_000,
      );
    }
    const { acknowledged: acked } = await verifyWrites(stack, answers, { indexed: true });
    expect(acked).toBeGreaterThan(40);
  },
  150_000,
);
