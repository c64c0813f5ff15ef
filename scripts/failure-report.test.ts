import { expect, test } from "bun:test";
import { createFailureCollector } from "./failure-report.ts";

const run = [
  "services/a.test.ts:",
  "(pass) first [1ms]",
  "42 |   expect(x).toBe(1);",
  "error: expect(received).toBe(expected)",
  "\x1b[31m(fail)\x1b[0m second [2ms]",
  "(pass) third",
  "other/b.test.ts:",
  "noise from a passing file",
  "(pass) fourth",
  "timed out waiting for Kafka",
  "(fail) fifth [3ms]",
  "",
  "2 tests failed:",
  "(fail) second [2ms]",
  "(fail) fifth [3ms]",
  "",
].join("\n");

test("each failure keeps the output printed since the previous result, once, without colour codes", () => {
  const collector = createFailureCollector();
  // Chunks split anywhere, even inside a line.
  for (let i = 0; i < run.length; i += 7) collector.push(run.slice(i, i + 7));
  expect(collector.blocks()).toEqual([
    "42 |   expect(x).toBe(1);\nerror: expect(received).toBe(expected)\n(fail) second [2ms]",
    "timed out waiting for Kafka\n(fail) fifth [3ms]",
  ]);
});

test("long outputs keep their last lines, and only so many failures are kept", () => {
  const collector = createFailureCollector({ maxLines: 2, maxFailures: 1 });
  collector.push("a\nb\nc\n(fail) one\nd\n(fail) two\n");
  expect(collector.blocks()).toEqual(["b\nc\n(fail) one"]);
});
