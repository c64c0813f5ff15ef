// OpenSearch stopped for ~10 s under ~16 PUT/s against a real API process (relay on) and a real indexer.
// npm test: alone: stops and restarts the local OpenSearch every other file uses
import { afterAll, beforeAll, expect, test } from "bun:test";
import {
  guardLines,
  inServiceProblems,
  localComponent,
  nonDatabaseOutageProblems,
  runOutage,
  startStack,
  verifyWrites,
  type Stack,
} from "./support/fault-harness.ts";

const part = await localComponent("opensearch");
let stack: Stack;

beforeAll(async () => {
  if (part) stack = await startStack({ indexer: true });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
}, 60_000);

test.skipIf(!part)(
  "OpenSearch down: every process keeps running, writes keep succeeding, the API stays ready, and every write is indexed after",
  async () => {
    const result = await runOutage(stack, part!, { outageMs: 10_000, perSecond: 16 });

    expect(stack.api.exitCode()).toBeNull();
    expect(stack.indexer!.exitCode()).toBeNull();
    expect(guardLines(stack.api)).toEqual([]);
    expect(guardLines(stack.indexer!)).toEqual([]);

    expect(result.whileDown.length).toBeGreaterThan(30);
    expect(nonDatabaseOutageProblems(result)).toEqual([]);
    // Readiness needs PostgreSQL only: the API stays in service, and says nothing about the cause.
    expect(inServiceProblems(result)).toEqual([]);

    // The indexer retried without committing; once OpenSearch is back the index converges.
    const { acknowledged } = await verifyWrites(stack, result.answers, { indexed: true, timeoutMs: 90_000 });
    expect(acknowledged).toBe(result.answers.length);
  },
  200_000,
);
