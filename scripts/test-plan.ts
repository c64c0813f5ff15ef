// Which test files the main part of `npm test` runs, and how: most at the same time (each in its own `bun test`
// process, several lanes, each lane on a database of its own), the few that must not share the servers alone,
// one after another, once the others are done (docs/testing.md, "Concurrent files and the serial group").
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** A file runs alone when its header says so, on a line of its own: `// npm test: alone: <why>`. */
const ALONE = /^\/\/ npm test: alone: (.+)$/m;

/** Why the file must run alone (stops a shared server, say), or null when it may share the servers. */
export function aloneReason(source: string): string | null {
  return ALONE.exec(source)?.[1]?.trim() ?? null;
}

/**
 * Every test file `bun test` would find under root (`*.test.ts`, outside node_modules and hidden directories),
 * repository-relative and sorted, but those matching an ignored prefix.
 */
export function discoverTestFiles(root: string, ignored: string[] = []): string[] {
  const files: string[] = [];
  for (const file of new Bun.Glob("**/*.test.{ts,tsx,js,jsx}").scanSync({ cwd: root, onlyFiles: true })) {
    const path = file.split("\\").join("/");
    if (path.split("/").includes("node_modules") || path.startsWith("tools/")) continue;
    if (ignored.some((prefix) => path.startsWith(prefix))) continue;
    files.push(path);
  }
  return files.sort();
}

/**
 * The path prefixes PSS_TEST_PATHS names (comma-separated, repository-relative: `services/api/test,scripts/`), or
 * null for every file. They restrict a whole run's main part, run as a whole run is (lanes, the serial group),
 * where `npm test -- <paths>` is one `bun test` over them.
 */
export function selectedPaths(env: Record<string, string | undefined>): string[] | null {
  const paths = (env.PSS_TEST_PATHS ?? "")
    .split(",")
    .map((p) => p.trim().replace(/^\.\//, ""))
    .filter(Boolean);
  return paths.length > 0 ? paths : null;
}

/** The files under one of the prefixes (all of them when prefixes is null). */
export function underPaths(files: string[], prefixes: string[] | null): string[] {
  return prefixes ? files.filter((file) => prefixes.some((prefix) => file.startsWith(prefix))) : files;
}

export interface TestPlan {
  /** Run at the same time, longest first (so a long file does not start last and hold the run up). */
  concurrent: string[];
  /** Run alone, one after another, after the concurrent ones: file and reason. */
  alone: { file: string; reason: string }[];
}

/**
 * Splits the files and orders the concurrent ones by their last measured duration (seconds, from an earlier run),
 * longest first; a file never measured (a fresh clone) counts by its size, integration tests (under a `test/`
 * directory) before the unit files beside the code, which take well under a second each.
 */
export function planTests(root: string, files: string[], durations: Record<string, number> = {}): TestPlan {
  const alone: TestPlan["alone"] = [];
  const estimate = new Map<string, number>();
  for (const file of files) {
    const source = readFileSync(join(root, file), "utf8");
    const reason = aloneReason(source);
    if (reason) alone.push({ file, reason });
    else
      estimate.set(
        file,
        durations[file] ?? (/(^|\/)test\//.test(file) ? 10 + source.length / 2_000 : source.length / 20_000),
      );
  }
  const concurrent = [...estimate.keys()].sort(
    (a, b) => (estimate.get(b) ?? 0) - (estimate.get(a) ?? 0) || a.localeCompare(b),
  );
  return { concurrent, alone };
}

/**
 * How many files run at once: PSS_TEST_LANES, else one more than the cores. A file alone keeps about one core busy
 * at most, servers included (a whole run one file at a time stayed near load 1 on 2 cores: the tests wait far more
 * than they compute); more lanes than that only make every file slower and the timing-bound tests fragile.
 */
export function testLanes(env: Record<string, string | undefined>): number {
  const wanted = Number(env.PSS_TEST_LANES);
  if (Number.isInteger(wanted) && wanted >= 1) return wanted;
  return Math.max(2, Math.min(8, navigator.hardwareConcurrency + 1));
}

/** Test files that must not skip anything in CI: the upgrade tests (a skip would let a release break upgrades). */
export const MUST_RUN_IN_CI = ["test/upgrades/"];

/** Why a file's skipped tests fail the run (CI=true, a file that must run), or null. */
export function forbiddenSkip(file: string, skipped: number, env: Record<string, string | undefined>): string | null {
  if (env.CI !== "true" || skipped === 0 || !MUST_RUN_IN_CI.some((dir) => file.startsWith(dir))) return null;
  return `${skipped} skipped, and in CI (CI=true) these tests must run`;
}
