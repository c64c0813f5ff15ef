import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isRunFrame, type OutputLine, runBunTest, summaryCounts } from "./bun-test-process.ts";

// Test files of their own in a directory of their own (its own empty bunfig.toml: no preload, no servers).
const dir = mkdtempSync(join(tmpdir(), "pss-bun-test-process-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, "bunfig.toml"), "[test]\n");
writeFileSync(
  join(dir, "mixed.test.ts"),
  `import { expect, test } from "bun:test";
test("passes", () => { console.log("said on stdout"); });
test("fails", () => { console.error("said on stderr"); expect(1).toBe(2); });
test.skip("skipped", () => {});
`,
);
writeFileSync(
  join(dir, "hangs.test.ts"),
  `import { test } from "bun:test";
test("starts a process and hangs", async () => {
  const child = Bun.spawn(["sleep", "600"]);
  console.log("child " + child.pid);
  await Bun.sleep(600_000);
}, 900_000);
`,
);
writeFileSync(
  join(dir, "leaves-a-process.test.ts"),
  `import { test } from "bun:test";
test("leaves a process behind that holds the output open", () => {
  const child = Bun.spawn(["sleep", "60"], { stdout: "inherit", stderr: "inherit", detached: true });
  child.unref();
  console.log("left " + child.pid);
});
`,
);
writeFileSync(join(dir, "broken.test.ts"), `import { test } from "bun:test";\nthrow new Error("does not load");\n`);

const env = { PATH: process.env.PATH };

test("a run's lines come whole and in order per stream, and its counts are the ones its summary states", async () => {
  const lines: OutputLine[] = [];
  const run = await runBunTest({ args: ["./mixed.test.ts"], env, cwd: dir, onLine: (l) => lines.push(l) });
  expect(run).toMatchObject({ passed: 1, failed: 1, skipped: 1, errors: 0, timedOut: false });
  expect(run.code).not.toBe(0);
  const stderr = lines.filter((l) => l.stream === "stderr").map((l) => l.line);
  expect(stderr.findIndex((l) => l.includes("(pass) passes"))).toBeLessThan(
    stderr.findIndex((l) => l.includes("(fail) fails")),
  );
  expect(stderr).toContain("said on stderr");
  expect(lines).toContainEqual({ stream: "stdout", line: "said on stdout" });
  // The frame is bun's banner and summary, nothing a test printed.
  const frame = lines.filter(isRunFrame).map((l) => l.line.trim());
  expect(frame).toEqual(
    expect.arrayContaining(["1 pass", "1 skip", "1 fail", expect.stringMatching(/^Ran 3 tests across 1 file\./)]),
  );
  expect(frame.some((l) => l.includes("said on"))).toBe(false);
});

test("a file that does not load ends non-zero with its error counted, though no test failed", async () => {
  const lines: string[] = [];
  const run = await runBunTest({ args: ["./broken.test.ts"], env, cwd: dir, onLine: (l) => lines.push(l.line) });
  expect(run.code).not.toBe(0);
  expect(run.failed + run.errors).toBeGreaterThan(0);
  expect(lines.join("\n")).toContain("does not load");
});

test("a file past its limit is killed, and with --no-orphans what it started goes too", async () => {
  const lines: string[] = [];
  const run = await runBunTest({
    args: ["--no-orphans", "./hangs.test.ts"],
    env,
    cwd: dir,
    limitMs: 3_000,
    onLine: (l) => lines.push(l.line),
  });
  expect(run.timedOut).toBe(true);
  expect(run.code).not.toBe(0);
  const pid = Number(/child (\d+)/.exec(lines.join("\n"))?.[1]);
  expect(pid).toBeGreaterThan(0);
  // Gone, or a zombie waiting for init to reap it: either way no longer running.
  const deadline = Date.now() + 5_000;
  const running = () => {
    try {
      process.kill(pid, 0);
    } catch {
      return false;
    }
    return !/^State:\s+Z/m.test(Bun.spawnSync(["cat", `/proc/${pid}/status`]).stdout.toString());
  };
  while (running() && Date.now() < deadline) await Bun.sleep(100);
  expect(running()).toBe(false);
}, 30_000);

test("summary counts: the last of each kind, colour codes aside; errors outside tests too", () => {
  expect(summaryCounts(" 3 pass\n 1 fail\n")).toEqual({ passed: 3, failed: 1, skipped: 0, errors: 0 });
  expect(summaryCounts("\x1b[32m 12 pass\x1b[0m\n 2 skip\n 0 fail\n 1 error\nRan 14 tests across 1 file.")).toEqual({
    passed: 12,
    failed: 0,
    skipped: 2,
    errors: 1,
  });
  expect(summaryCounts("a test printed ' 9 pass' inline\n 1 pass\n")).toMatchObject({ passed: 1 });
});

test("a process the file left running with its output open does not hold the run up", async () => {
  const lines: string[] = [];
  const t0 = Date.now();
  const run = await runBunTest({
    args: ["./leaves-a-process.test.ts"],
    env,
    cwd: dir,
    onLine: (l) => lines.push(l.line),
  });
  const pid = Number(/left (\d+)/.exec(lines.join("\n"))?.[1]);
  try {
    expect(run).toMatchObject({ passed: 1, failed: 0, code: 0 });
    expect(pid).toBeGreaterThan(0);
    // Well before the 60 s the process it left would keep the pipes open.
    expect(Date.now() - t0).toBeLessThan(20_000);
  } finally {
    if (pid > 0) process.kill(pid, "SIGKILL");
  }
}, 60_000);
