// A contributor runs a unit file without any server: PSS_TEST_INFRA=none makes the preload provide nothing, the
// unit file passes at once, and an integration file says what it lacks instead of waiting for servers.
import { expect, test } from "bun:test";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");

async function bunTest(file: string) {
  // No server URL at all, and nothing that points at a local runner: as on a machine where none runs.
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    PSS_TEST_INFRA: "none",
  };
  const t0 = Date.now();
  const proc = Bun.spawn([process.execPath, "test", file], { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, output: out + err, seconds: (Date.now() - t0) / 1000 };
}

test("PSS_TEST_INFRA=none runs a unit file with no server at all", async () => {
  const run = await bunTest("packages/contracts/src/mode.test.ts");
  expect(run.code).toBe(0);
  expect(run.output).toMatch(/\d+ pass/);
  expect(run.output).not.toContain("test setup: real servers");
  // No server was started or waited for (the bound is generous: the machine may be busy).
  expect(run.seconds).toBeLessThan(30);
}, 60_000);

test("an integration file run that way fails at once, naming what it lacks", async () => {
  const run = await bunTest("test/infrastructure/redis.test.ts");
  expect(run.code).not.toBe(0);
  expect(run.output).toContain("PSS_TEST_INFRA=none provides no servers");
}, 60_000);
