import { expect, test } from "bun:test";
import { codeBlocks, outputMismatch, screenLines, sessionSteps } from "./doc-examples.ts";

test("code blocks carry their language, attributes and line", () => {
  const md = [
    "# T",
    "",
    "```ts run",
    "console.log(1);",
    "```",
    "",
    "```ndjson file=feed.ndjson",
    '{"a":1}',
    "```",
    "```console dry-run",
    "$ pss-sync feed.ndjson",
    "done",
    "$ echo $?",
    "0",
    "```",
  ].join("\n");
  const blocks = codeBlocks(md);
  expect(blocks.map((b) => [b.lang, b.attrs, b.line])).toEqual([
    ["ts", { run: true }, 3],
    ["ndjson", { file: "feed.ndjson" }, 7],
    ["console", { "dry-run": true }, 10],
  ]);
  expect(sessionSteps(blocks[2]!)).toEqual([
    { command: "pss-sync feed.ndjson", expected: ["done"] },
    { command: "echo $?", expected: ["0"] },
  ]);
});

test("an unclosed block is an error, not a silently skipped example", () => {
  expect(() => codeBlocks("```ts run\nconsole.log(1);\n")).toThrow("never closed");
});

test("… matches any text within a line, and a line of … any number of lines", () => {
  expect(outputMismatch(["201 true Broker created …"], ["201 true Broker created 9f0c"])).toBeNull();
  expect(outputMismatch(["first", "…", "last"], ["first", "a", "b", "last"])).toBeNull();
  expect(outputMismatch(["first", "…", "last"], ["first", "last"])).toBeNull();
  expect(outputMismatch(["a (b) [c] $1.5"], ["a (b) [c] $1.5"])).toBeNull();
});

test("different output is reported with the first line that differs", () => {
  expect(outputMismatch(["201 true Broker created …"], ["200 false Broker updated x"])).toContain(
    'expected line "201 true Broker created …", got "200 false Broker updated x"',
  );
  // A missing line, an extra line, and a wildcard that must not swallow a whole line's difference.
  expect(outputMismatch(["a", "b"], ["a"])).not.toBeNull();
  expect(outputMismatch(["a"], ["a", "b"])).not.toBeNull();
  expect(outputMismatch(["x … y"], ["x 1"])).not.toBeNull();
  expect(outputMismatch([], ["printed something"])).not.toBeNull();
});

test("the screen shows a redrawn line as its last drawing, without escape sequences", () => {
  expect(screenLines("\r\x1b[2Klistings [#-] 1/2\r\x1b[2Kdone [##] 2/2\r\nsummary\r\n\r\n")).toEqual([
    "done [##] 2/2",
    "summary",
  ]);
});
