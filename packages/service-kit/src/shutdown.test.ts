import { expect, test } from "bun:test";
import { createLogger } from "./logger.ts";
import { createShutdown, shutdownBudgetMs } from "./shutdown.ts";

function recordingLogger() {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: createLogger({ service: "test", level: "debug", write: (l) => lines.push(JSON.parse(l)) }) };
}

test("the shutdown budget is the step limit plus ten seconds unless a total is given", () => {
  expect(shutdownBudgetMs()).toBe(25_000);
  expect(shutdownBudgetMs({ stepTimeoutMs: 25_000 })).toBe(35_000);
  expect(shutdownBudgetMs({ stepTimeoutMs: 25_000, totalTimeoutMs: 40_000 })).toBe(40_000);
});

test("steps run in registration order, and a failing step does not stop the ones after it", async () => {
  const { logger, lines } = recordingLogger();
  const order: string[] = [];
  const shutdown = createShutdown(logger);
  shutdown.register("first", () => void order.push("first"));
  shutdown.register("broken", () => {
    throw new Error("boom");
  });
  shutdown.register("last", async () => void order.push("last"));
  await shutdown.run("test");
  expect(order).toEqual(["first", "last"]);
  expect(lines.find((l) => l.msg === "shutdown step failed")).toMatchObject({ step: "broken" });
  expect(lines.at(-1)).toMatchObject({ msg: "stopped" });
});

test("a hanging step is abandoned after the step limit, and the whole run never outlasts the total", async () => {
  const { logger, lines } = recordingLogger();
  const shutdown = createShutdown(logger, { stepTimeoutMs: 150, totalTimeoutMs: 250 });
  const never = () => new Promise(() => {});
  let closed = false;
  shutdown.register("hangs 1", never);
  shutdown.register("hangs 2", never);
  shutdown.register("close", () => void (closed = true));
  const started = Date.now();
  await shutdown.run("test");
  const took = Date.now() - started;
  expect(took).toBeGreaterThanOrEqual(240);
  expect(took).toBeLessThan(1_000);
  // The second hanging step got only what was left of the total (about 100 ms), then the budget was gone.
  const failures = lines
    .filter((l) => l.msg === "shutdown step failed")
    .map((l) => [l.step, (l.err as { message: string }).message]);
  expect(failures.map(([step]) => step)).toEqual(["hangs 1", "hangs 2"]);
  expect(failures[0]![1]).toBe("timed out after 150 ms");
  expect(Number(/after (\d+) ms/.exec(failures[1]![1] as string)![1])).toBeLessThanOrEqual(100);
  expect(lines.find((l) => l.msg === "shutdown step skipped: shutdown time used up")).toMatchObject({ step: "close" });
  expect(closed).toBe(false);
});
