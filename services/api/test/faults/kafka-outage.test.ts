// Kafka stopped for ~10 s under ~16 PUT/s against a real API process (relay on), a real indexer, and the media
// and leads workers (their consumers must rejoin by themselves).
// npm test: alone: stops and restarts the local Kafka every other file uses
import { afterAll, beforeAll, expect, test } from "bun:test";
import {
  guardLines,
  inServiceProblems,
  localComponent,
  nonDatabaseOutageProblems,
  runOutage,
  startStack,
  verifyWrites,
  waitUntil,
  type Stack,
} from "./support/fault-harness.ts";

const part = await localComponent("kafka");
let stack: Stack;

beforeAll(async () => {
  if (part) stack = await startStack({ indexer: true, workers: true });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
}, 60_000);

test.skipIf(!part)(
  "Kafka down: every process keeps running, writes keep succeeding, the API stays ready, and every write is indexed after",
  async () => {
    const result = await runOutage(stack, part!, { outageMs: 10_000, perSecond: 16 });

    for (const p of [stack.api, stack.indexer!, ...stack.workers]) {
      expect([p.name, p.exitCode()]).toEqual([p.name, null]);
      expect(guardLines(p)).toEqual([]);
    }

    expect(result.whileDown.length).toBeGreaterThan(30);
    expect(nonDatabaseOutageProblems(result)).toEqual([]);
    // Readiness needs PostgreSQL only: the API stays in service, and says nothing about the cause.
    expect(inServiceProblems(result)).toEqual([]);

    // Events waited in the outbox while Kafka was down and reached the indexer after: checked by verifyWrites.
    const { acknowledged } = await verifyWrites(stack, result.answers, { indexed: true, timeoutMs: 90_000 });
    for (const p of [stack.indexer!, ...stack.workers]) {
      await waitUntil(
        `${p.name} to be ready again`,
        async () => (await fetch(`http://127.0.0.1:${p.port}/readyz`)).ok,
        30_000,
      );
    }
    expect(acknowledged).toBe(result.answers.length);
  },
  200_000,
);
