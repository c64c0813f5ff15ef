// The infra CLI acts on the part it is named. Stopping a shared server disturbs everyone using it, so the
// round trip uses Redis only (it restarts in well under a second from its AOF) and always restarts it.
// npm test: alone: stops and restarts the local Redis every other file uses
import { expect, test } from "bun:test";
import { components, defaultPaths, PART_NAMES, status } from "../../infra/src/index.ts";
import { testUrls } from "../support/env.ts";

const root = new URL("../..", import.meta.url).pathname;

/** Runs `bun infra/cli.ts ...args` without the URL variables, so the runner manages every part itself. */
async function infra(...args: string[]) {
  const env = { ...process.env };
  for (const v of ["DATABASE_URL", "REDIS_URL", "KAFKA_BROKERS", "OPENSEARCH_URL", "S3_ENDPOINT"]) delete env[v];
  const proc = Bun.spawn([process.execPath, "infra/cli.ts", ...args], {
    cwd: root,
    env,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { stdout, stderr, code };
}

test("infra refuses an unknown part with exit code 2 and names the known parts", async () => {
  for (const command of ["up", "down", "status", "logs"]) {
    const r = await infra(command, "kafak");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown part 'kafak'");
    for (const part of PART_NAMES) expect(r.stderr).toContain(part);
  }
});

test("infra status <part> reports that part only", async () => {
  const r = await infra("status", "postgres");
  const lines = r.stdout.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toStartWith("postgres ");
});

test("infra status --secured reports the secured profile's four parts on their own ports, without their passwords", async () => {
  const r = await infra("status", "--secured");
  const lines = r.stdout.trim().split("\n");
  expect(lines.map((l) => l.split(/\s+/)[0])).toEqual(["postgres", "redis", "kafka", "opensearch"]);
  const secrets = JSON.parse(await Bun.file(`${root}.data/secured/secrets.json`).text()) as Record<string, string>;
  for (const secret of Object.values(secrets)) expect(r.stdout).not.toContain(secret);
  expect(lines[0]).toContain("postgres://pss:***@127.0.0.1:55442/pss?sslmode=verify-full");
  expect(lines[1]).toContain("rediss://pss:***@127.0.0.1:56389");
  expect(lines[3]).toContain("https://127.0.0.1:9270");
});

// Only meaningful when this run's servers come from the local runner (CI, our machines); against
// testcontainers or configured servers the runner manages nothing and the case is skipped.
// Zipkin is left out: the runner starts it only on request (npm start), and the tests' servers do not include it.
// The runner of this checkout must run them (the same ports may be another checkout's servers, not ours to stop).
const served = components(defaultPaths()).filter((c) => c.name !== "zipkin");
const localRunnerInUse =
  served.every((c) => (testUrls() as Record<string, string>)[c.env.name] === c.env.value) &&
  (await Promise.all(served.map((c) => c.running()))).every(Boolean);
if (!localRunnerInUse)
  console.error("infra-cli.test.ts: the servers are not this checkout's local runner's; 'infra down redis' is skipped");

test.skipIf(!localRunnerInUse)(
  "infra down redis stops Redis only: PostgreSQL, Kafka, OpenSearch and the S3 server keep running and answering",
  async () => {
    const before = await status();
    expect(before.every((p) => p.running && p.ready)).toBe(true);
    try {
      const r = await infra("down", "redis");
      expect(r.code).toBe(0);
      const after = Object.fromEntries((await status()).map((p) => [p.name, p]));
      expect(after.redis).toMatchObject({ running: false, ready: false });
      for (const name of ["postgres", "kafka", "opensearch", "s3"])
        expect(after[name]).toMatchObject({ running: true, ready: true });
    } finally {
      const r = await infra("up", "redis");
      expect(r.code).toBe(0);
    }
    const restored = await status(defaultPaths(), ["redis"]);
    expect(restored[0]).toMatchObject({ name: "redis", running: true, ready: true });
  },
  60_000,
);
