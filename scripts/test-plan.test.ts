import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  aloneReason,
  discoverTestFiles,
  forbiddenSkip,
  planTests,
  selectedPaths,
  testLanes,
  underPaths,
} from "./test-plan.ts";

const root = join(import.meta.dir, "..");

test("a file runs alone when a line of its own says so, with the reason given", () => {
  expect(aloneReason("// header\n// npm test: alone: stops the local Kafka\nimport x;")).toBe("stops the local Kafka");
  expect(aloneReason("// header\nimport x;")).toBeNull();
  // Only a comment line of its own counts, not a mention in prose or code.
  expect(aloneReason(`const s = "// npm test: alone: no";`)).toBeNull();
  expect(aloneReason("// as docs say, `// npm test: alone: <why>` marks it")).toBeNull();
});

test("discovery finds the repository's test files (this one too), none under node_modules or tools, minus the ignored", () => {
  const files = discoverTestFiles(root);
  expect(files).toContain("scripts/test-plan.test.ts");
  expect(files).toContain("services/api/test/faults/kafka-outage.test.ts");
  expect(files.some((f) => f.includes("node_modules/") || f.startsWith("tools/") || f.startsWith("."))).toBe(false);
  expect(files).toEqual([...files].sort());
  const without = discoverTestFiles(root, ["test/containers/", "services/api/test/faults/"]);
  expect(without.some((f) => f.startsWith("test/containers/") || f.startsWith("services/api/test/faults/"))).toBe(
    false,
  );
  expect(without.length).toBeLessThan(files.length);
});

test("every test file that stops one of the shared local servers runs alone", () => {
  const plan = planTests(root, discoverTestFiles(root));
  const alone = plan.alone.map((a) => a.file);
  // What can stop a server: the local runner's components (the fault harness's localComponent, infra's
  // xComponent(defaultPaths()) or components(defaultPaths())), or the infra CLI's `down`.
  const others = discoverTestFiles(root).filter((file) => file !== "scripts/test-plan.test.ts");
  const stopsAServer = others.filter((file) =>
    /localComponent\(|\b\w+Component\(defaultPaths|\bcomponents\(defaultPaths|infra\("down"/.test(
      readFileSync(join(root, file), "utf8"),
    ),
  );
  expect(stopsAServer.length).toBeGreaterThanOrEqual(6);
  for (const file of stopsAServer) expect(alone).toContain(file);
  expect(plan.concurrent.length + plan.alone.length).toBe(discoverTestFiles(root).length);
  for (const { reason } of plan.alone) expect(reason.length).toBeGreaterThan(10);
});

test("the longest files start first: measured ones by their last duration, the others by an estimate", () => {
  const files = [
    "packages/contracts/src/mode.test.ts",
    "services/api/test/http.test.ts",
    "test/upgrades/cross-release.test.ts",
    "services/api/test/faults/kafka-outage.test.ts",
  ];
  const measured = planTests(root, files, {
    "packages/contracts/src/mode.test.ts": 300,
    "test/upgrades/cross-release.test.ts": 120,
    "services/api/test/http.test.ts": 20,
  });
  expect(measured.concurrent).toEqual([
    "packages/contracts/src/mode.test.ts",
    "test/upgrades/cross-release.test.ts",
    "services/api/test/http.test.ts",
  ]);
  expect(measured.alone.map((a) => a.file)).toEqual(["services/api/test/faults/kafka-outage.test.ts"]);
  // Never measured (a fresh clone): integration tests before the unit files beside the code.
  const fresh = planTests(root, files);
  expect(fresh.concurrent.at(-1)).toBe("packages/contracts/src/mode.test.ts");
});

test("lanes: PSS_TEST_LANES when it is a positive whole number, else one more than the cores (at least 2, at most 8)", () => {
  expect(testLanes({ PSS_TEST_LANES: "3" })).toBe(3);
  expect(testLanes({ PSS_TEST_LANES: "1" })).toBe(1);
  const byCores = Math.max(2, Math.min(8, navigator.hardwareConcurrency + 1));
  for (const value of [undefined, "0", "-2", "two", "1.5"]) expect(testLanes({ PSS_TEST_LANES: value })).toBe(byCores);
});

test("in CI a skipped upgrade test fails the run; elsewhere, or another file's skip, does not", () => {
  expect(forbiddenSkip("test/upgrades/cross-release.test.ts", 2, { CI: "true" })).toBe(
    "2 skipped, and in CI (CI=true) these tests must run",
  );
  expect(forbiddenSkip("test/upgrades/cross-release.test.ts", 0, { CI: "true" })).toBeNull();
  expect(forbiddenSkip("test/upgrades/cross-release.test.ts", 2, {})).toBeNull();
  expect(forbiddenSkip("test/kubernetes/chart-cluster.test.ts", 4, { CI: "true" })).toBeNull();
});

test("PSS_TEST_PATHS restricts a whole run to the files under the prefixes it names; unset or empty, every file", () => {
  const files = ["scripts/a.test.ts", "services/api/test/b.test.ts", "services/api/src/c.test.ts", "test/d.test.ts"];
  expect(selectedPaths({})).toBeNull();
  expect(selectedPaths({ PSS_TEST_PATHS: " , " })).toBeNull();
  const paths = selectedPaths({ PSS_TEST_PATHS: "./services/api/test, scripts/" });
  expect(paths).toEqual(["services/api/test", "scripts/"]);
  expect(underPaths(files, paths)).toEqual(["scripts/a.test.ts", "services/api/test/b.test.ts"]);
  expect(underPaths(files, null)).toEqual(files);
});
