// `npm test`: brings up the real servers (or uses configured URLs), then runs every test with `bun test`.
// Extra arguments go to one `bun test` (a path filter, -t pattern, ...). Without them every test file runs in a
// `bun test` of its own, several at a time, each lane on a database of its own, and the few that must run alone
// (they stop a shared server) one after another at the end (scripts/test-plan.ts, scripts/test-lanes.ts).
//
// A whole run (no arguments) then tests the containers on a real Docker engine (scripts/containers/): the engine
// that answers, or Debian's docker.io installed and dockerd started here (stopped again at the end); the images
// `npm run images` builds; the compose stack tests (test/containers/); and the infrastructure and whole-pipeline
// tests again on testcontainers. Where no engine can be had, one line says why and the rest still counts.
// PSS_CONTAINERS=0 leaves the container part out, PSS_CONTAINERS=1 runs it even with arguments. PSS_TEST_PATHS
// (comma-separated path prefixes) runs only the main part's files under them, concurrently as a whole run does. After the compose
// tests the part installs the Helm chart on a real one-node Kubernetes (scripts/kubernetes/; its binaries' first
// build starts at once, at nice 19, and overlaps the run); PSS_KUBERNETES=0 leaves that step out. The chart lint (test/kubernetes/chart-lint.test.ts) runs
// in the main part with Helm, built from the Go module proxy when missing (cached).
//
// First of all, the lint step (scripts/lint-step.ts: `biome check`, then `tsc --noEmit`): a whole run stops at once on a violation; a run
// with arguments (one file while working) still runs its tests and then fails. PSS_LINT=0 leaves the step out.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { S3_VARIABLES, testToolBinary, URL_VARIABLES } from "../infra/src/index.ts";
import { RUNTIME_BUN_OPTIONS } from "../packages/http-kit/src/edge.ts";
import { provideInfrastructure } from "../test/support/infrastructure.ts";
import { buildImages } from "./containers/build-images.ts";
import { ensureEngine, nofileLimit } from "./containers/engine.ts";
import { ensureHelm } from "./kubernetes/binaries.ts";
import { chartStep, kubernetesStepEnabled, prepareKubernetes } from "./kubernetes/chart-step.ts";
import { type BunTestRun, isRunFrame, type OutputLine, runBunTest } from "./bun-test-process.ts";
import { quoteForeignClosingLines } from "./closing-lines.ts";
import { createFailureCollector } from "./failure-report.ts";
import { lintStep } from "./lint-step.ts";
import { ensureLaneDatabases, runPlan } from "./test-lanes.ts";
import { discoverTestFiles, forbiddenSkip, planTests, selectedPaths, testLanes, underPaths } from "./test-plan.ts";

const ROOT = join(import.meta.dir, "..");
const args = process.argv.slice(2);
/** A test file running longer than this is killed and counts as failed (the longest take a few minutes). */
const FILE_LIMIT_MS = 20 * 60_000;
// A run restricted by PSS_TEST_PATHS is a sample of the main part: no container part unless PSS_CONTAINERS=1.
const containerPart =
  process.env.PSS_CONTAINERS === "1" ||
  (args.length === 0 && process.env.PSS_CONTAINERS !== "0" && selectedPaths(process.env) === null);

const lint = process.env.PSS_LINT === "0" ? { ok: true } : await lintStep();
if (!lint.ok && args.length === 0) {
  console.log("\ntests: not run (lint failed)");
  process.exit(1);
}

const started = Date.now();
// Helm for the chart lint: built (first run only, about 2.5 min) while the servers start.
const helmReady = ensureHelm({ build: args.length === 0, log: (line) => console.error(`test: ${line}`) }).catch(
  (err) => (console.error(`test: no helm: ${(err as Error).message.split("\n")[0]}`), null),
);
const { urls, source } = await provideInfrastructure(process.env);
console.error(`test: real servers from ${source} ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
// Tools some tests run as real processes (a private PgBouncer, compose's HAProxy configuration on this host):
// installed like the other system packages; where they cannot be, those tests skip and one line says so.
for (const [tool, tests] of [
  ["pgbouncer", "PgBouncer"],
  ["haproxy", "load-balancer"],
] as const) {
  const binary = await testToolBinary(tool, { install: true }).catch(
    (err) => (console.error(`test: could not install ${tool}: ${(err as Error).message}`), null),
  );
  if (!binary)
    console.error(
      `test: ${tool} is not installed (and this user cannot install it): the ${tests} tests will be skipped`,
    );
}
const helm = await helmReady;
// The cluster's binaries (first run only, about 15 min of CPU at nice 19) build while the other tests run.
const kubeBinaries =
  containerPart && kubernetesStepEnabled()
    ? prepareKubernetes((line) => console.error(`test: kubernetes: ${line}`))
    : null;

// The same runtime header limit the API is deployed with (packages/http-kit/src/edge.ts).
const bunOptions = [process.env.BUN_OPTIONS, RUNTIME_BUN_OPTIONS].filter(Boolean).join(" ");
const failures = createFailureCollector();
const totals = { passed: 0, failed: 0, skipped: 0, code: 0 };

/** Where a run's output goes: foreign closing lines quoted, stderr (bun test's report) read for failures. */
function report(line: OutputLine): void {
  const text = `${line.line}\n`;
  if (line.stream === "stdout") process.stdout.write(quoteForeignClosingLines(text));
  else {
    process.stderr.write(quoteForeignClosingLines(text));
    failures.push(text);
  }
}

/** Adds a run's counts. A test file's run that ended badly without a failed test (it crashed, hung, or an error
 * outside any test) counts as one failure, its own output (reported already) the failure's detail. */
function count(run: BunTestRun, what: string, opts: { file: boolean }): void {
  totals.passed += run.passed;
  totals.failed += run.failed;
  totals.skipped += run.skipped;
  if (opts.file && run.code !== 0 && run.failed === 0) {
    const why = run.timedOut
      ? `killed after ${Math.round(run.seconds / 60)} min, its limit`
      : `exited with code ${run.code}${run.errors ? ` (${run.errors} error${run.errors > 1 ? "s" : ""} outside any test)` : ""}`;
    report({ stream: "stderr", line: `(fail) ${what}: bun test ${why}` });
    totals.failed += 1;
  }
  if (totals.code === 0 && run.code !== 0) totals.code = run.code;
  const skippedWrongly = opts.file ? forbiddenSkip(what, run.skipped, process.env) : null;
  if (skippedWrongly) {
    report({ stream: "stderr", line: `(fail) ${what}: ${skippedWrongly}` });
    totals.failed += 1;
    if (totals.code === 0) totals.code = 1;
  }
}

/** One `bun test` run, its report passing through as it comes; its counts add to the closing line. */
async function bunTest(testArgs: string[], env: Record<string, string | undefined>, limitMs?: number): Promise<void> {
  const run = await runBunTest({
    args: ["--timeout", "60000", ...testArgs],
    env: { ...env, PSS_TEST_QUIET: "1", BUN_OPTIONS: bunOptions },
    limitMs,
    onLine: report,
  });
  count(run, `bun test ${testArgs.join(" ")}`, { file: false });
  // A run of its own that passed nothing (every test skipped, or none found) fails the run, as it always did.
  if (totals.code === 0 && run.passed === 0) totals.code = 1;
}

/** One test file in its own `bun test`; bun's banner and summary left out (the closing line sums them up). */
async function bunTestFile(
  file: string,
  env: Record<string, string | undefined>,
  onLine: (line: OutputLine) => void,
  opts: { alone: boolean },
): Promise<BunTestRun> {
  return runBunTest({
    // --no-orphans: when the file's process ends (done, or killed at its limit), so does everything it started,
    // even detached. Not for a file that runs alone: it restarts the shared servers it stopped (detached, from
    // the local runner), which must outlive it.
    args: ["--timeout", "60000", ...(opts.alone ? [] : ["--no-orphans"]), `./${file}`],
    env: { ...env, PSS_TEST_QUIET: "1", BUN_OPTIONS: bunOptions },
    limitMs: FILE_LIMIT_MS,
    onLine: (line) => {
      if (!isRunFrame(line)) onLine(line);
    },
  });
}

/**
 * The main part without arguments: every test file in its own `bun test`, at most PSS_TEST_LANES at a time, each
 * lane on a database of its own (scripts/test-lanes.ts); a file's output is shown whole once it is done, never
 * mixed with another's. Then the files that must run alone (scripts/test-plan.ts), one after another, as they go.
 */
async function mainPart(env: Record<string, string | undefined>, ignored: string[]): Promise<void> {
  const t0 = Date.now();
  const durationsFile = join(ROOT, ".data", "test-durations.json");
  const durations: Record<string, number> = existsSync(durationsFile)
    ? JSON.parse(readFileSync(durationsFile, "utf8"))
    : {};
  const plan = planTests(ROOT, underPaths(discoverTestFiles(ROOT, ignored), selectedPaths(process.env)), durations);
  const width = testLanes(process.env);
  // provideInfrastructure always gives a DATABASE_URL.
  const databases = await ensureLaneDatabases(env.DATABASE_URL ?? urls.DATABASE_URL, width);
  console.error(
    `test: ${plan.concurrent.length} test files, at most ${width} at a time (a database per lane), then ${plan.alone.length} alone: ${plan.alone.map((a) => `${a.file} (${a.reason})`).join("; ")}`,
  );
  const took: Record<string, number> = {};
  let concurrentSeconds = 0;
  await runPlan(plan, width, async (file, lane) => {
    if (lane === null) {
      // Alone: its output as it comes, on the run's own database (a fault test's outage is nobody else's).
      concurrentSeconds ||= (Date.now() - t0) / 1000;
      const run = await bunTestFile(file, env, report, { alone: true });
      count(run, file, { file: true });
      took[file] = run.seconds;
      return;
    }
    const lines: OutputLine[] = [];
    const run = await bunTestFile(file, { ...env, DATABASE_URL: databases[lane - 1] }, (line) => lines.push(line), {
      alone: false,
    });
    for (const line of lines) report(line);
    count(run, file, { file: true });
    took[file] = run.seconds;
  });
  concurrentSeconds ||= (Date.now() - t0) / 1000;
  mkdirSync(dirname(durationsFile), { recursive: true });
  writeFileSync(durationsFile, `${JSON.stringify({ ...durations, ...took }, null, 1)}\n`);
  const slowest = Object.entries(took)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([file, s]) => `${file} ${Math.round(s)} s`);
  const sum = Object.values(took).reduce((a, b) => a + b, 0);
  console.error(
    `test: main part took ${Math.round((Date.now() - t0) / 1000)} s (${Math.round(concurrentSeconds)} s for the files at the same time, ${Math.round(sum)} s of files in all); slowest: ${slowest.join(", ")}`,
  );
}

const mainEnv = { ...process.env, ...urls, ...(helm ? { PSS_HELM: helm } : {}) };
if (args.length === 0) {
  // The compose tests need the engine the container part provides: in the main run they would only skip.
  await mainPart(
    mainEnv,
    containerPart
      ? ["test/containers/", "test/kubernetes/chart-cluster.test.ts", "test/kubernetes/chart-production.test.ts"]
      : [],
  );
} else {
  await bunTest(
    containerPart
      ? [
          "--path-ignore-patterns=test/containers/**",
          "--path-ignore-patterns=test/kubernetes/chart-cluster.test.ts",
          "--path-ignore-patterns=test/kubernetes/chart-production.test.ts",
          ...args,
        ]
      : args,
    mainEnv,
  );
}
if (containerPart) await containerTests();

// A long run's failures scroll far away from its end: repeat each one's own output (bounded) just before the
// closing line, where CI logs that keep only the tail still show it.
const details = failures.blocks();
if (details.length > 0)
  console.error(
    `\nfailures in detail (the output each failing test printed):\n${details.map(quoteForeignClosingLines).join("\n\n")}`,
  );
console.log(
  `\ntests: ${totals.passed} passed, ${totals.failed} failed${totals.skipped ? `, ${totals.skipped} skipped` : ""}${lint.ok ? "" : " (and lint failed: see above)"}`,
);
process.exit(totals.code || (totals.passed === 0 || !lint.ok ? 1 : 0));

/** The Helm chart on a one-node Kubernetes (scripts/kubernetes/chart-step.ts); its timings join the part's. */
async function kubernetesStep(
  images: Record<string, string>,
  urls: Record<string, string>,
  timings: Record<string, number>,
): Promise<void> {
  const t = Date.now();
  const log = (line: string) => console.error(`test: kubernetes: ${line}`);
  try {
    const result = await chartStep({
      images,
      binaries: kubeBinaries,
      log,
      run: (env) =>
        bunTest(
          ["--timeout", "720000", "test/kubernetes/chart-cluster.test.ts", "test/kubernetes/chart-production.test.ts"],
          { ...process.env, ...urls, ...env },
          30 * 60_000,
        ),
    });
    if (result.skipped) console.error(`test: kubernetes chart tests skipped: ${result.skipped}`);
    for (const [k, v] of Object.entries(result.timings)) timings[`kubernetes.${k}`] = v;
  } catch (err) {
    console.error(`test: kubernetes chart tests failed: ${(err as Error).message}`);
    totals.failed += 1;
    if (totals.code === 0) totals.code = 1;
  }
  timings.kubernetes = (Date.now() - t) / 1000;
}

async function containerTests(): Promise<void> {
  const t0 = Date.now();
  const engine = await ensureEngine({ install: true, log: (line) => console.error(`test: ${line}`) });
  if (!engine.ok) {
    console.error(`test: container tests skipped: ${engine.reason}`);
    return;
  }
  const run = `run-${process.pid}-${Date.now()}`;
  const timings: Record<string, number> = { engine: (Date.now() - t0) / 1000 };
  try {
    let t = Date.now();
    // The compose plugin's build (first run only) overlaps the image builds: one is CPU, the other mostly I/O.
    const [built] = await Promise.all([
      buildImages({ log: (line) => console.error(`test: images: ${line}`) }).finally(
        () => (timings.images = (Date.now() - t) / 1000),
      ),
      engine.composePlugin?.finally(() => (timings.composePlugin = (Date.now() - t) / 1000)),
    ]);
    const imageEnv = { ...built.variables, PSS_OPENSEARCH_NOFILE: String(nofileLimit()) };
    // Compose stack tests (test/containers/): the servers the preload wants are this run's.
    t = Date.now();
    await bunTest(["--timeout", "900000", "test/containers"], {
      ...process.env,
      ...urls,
      ...imageEnv,
      PSS_CONTAINER_TESTS: "1",
    });
    timings.compose = (Date.now() - t) / 1000;
    if (kubernetesStepEnabled()) await kubernetesStep(built.variables, urls, timings);
    // The infrastructure and whole-pipeline tests once more, their servers from testcontainers on those images:
    // no URL is set, nothing is pulled (no Ryuk; the engine's host is this machine).
    t = Date.now();
    const env: Record<string, string | undefined> = {
      ...process.env,
      ...imageEnv,
      PSS_TEST_INFRA: "testcontainers",
      PSS_TEST_RUN: run,
      TESTCONTAINERS_RYUK_DISABLED: "true",
    };
    // The engine is this machine's (unless DOCKER_HOST says otherwise): testcontainers need not pull a helper image to find it.
    if (!process.env.DOCKER_HOST) env.TESTCONTAINERS_HOST_OVERRIDE ??= "127.0.0.1";
    for (const v of [...URL_VARIABLES, ...S3_VARIABLES]) delete env[v];
    console.error("test: the infrastructure and whole-pipeline tests on testcontainers");
    // Not infra-cli.test.ts: it tests the local runner's CLI (the main run did), which manages no container, so
    // here its round trip could only skip.
    const onContainers = readdirSync(join(import.meta.dir, "..", "test", "infrastructure"))
      .filter((f) => f.endsWith(".test.ts") && f !== "infra-cli.test.ts")
      .map((f) => `./test/infrastructure/${f}`);
    await bunTest([...onContainers, "./test/pipeline"], env);
    timings.testcontainers = (Date.now() - t) / 1000;
  } catch (err) {
    console.error(`test: container tests failed: ${(err as Error).message}`);
    totals.failed += 1;
    if (totals.code === 0) totals.code = 1;
  } finally {
    // Without Ryuk nothing reaps what a run's test processes left: remove this run's containers by their label.
    const left = (
      await new Response(Bun.spawn(["docker", "ps", "-aq", "--filter", `label=pss.test-run=${run}`]).stdout).text()
    )
      .split("\n")
      .filter(Boolean);
    if (left.length > 0)
      await Bun.spawn(["docker", "rm", "-f", "-v", ...left], { stdout: "ignore", stderr: "ignore" }).exited;
    if (engine.startedHere) await engine.stop();
    console.error(
      `test: container part took ${((Date.now() - t0) / 1000).toFixed(0)} s ${JSON.stringify(Object.fromEntries(Object.entries(timings).map(([k, v]) => [k, Math.round(v)])))}`,
    );
  }
}
