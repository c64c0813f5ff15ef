// Issue 38: a checkout under a directory only its owner may enter (root's home is 0700, and so are Debian users'
// homes) must start. Run as root, PostgreSQL runs as `postgres`, which could neither enter such a checkout nor read
// the files initdb was given there. This test copies this checkout under a fresh 0700 directory and runs, from
// there, what a newcomer runs: `npm run infra -- up` (all five servers), `npm run migrate`, `npm start` until every
// service is ready, the first partner key and a PUT, then Ctrl-C and `npm run infra -- down`.
//
// Why that stands for `npm test` from such a checkout too: the test run's preload (test/setup.ts) provides its
// servers with the same `up()` of infra/ and applies the same migrations, and the tests run as the checkout's
// owner; the one server that runs as another user is PostgreSQL (PgBouncer, the only other one, gets its
// configuration in a 0755 directory under /tmp, test/support/pgbouncer.ts).
//
// The copy's servers use the standard ports, which the servers this run uses may hold: they run in a network
// namespace of the test's own (its own loopback), created and deleted here. Its PostgreSQL cluster is outside the
// checkout, in a directory named after the copy's path, so it never meets another checkout's data.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultPaths } from "../../infra/src/index.ts";
import { resolveJars } from "../../infra/src/maven.ts";
import { SERVER_USER_HOME, serverDirOf } from "../../infra/src/postgres.ts";
import { aptInstall, postgresBinDir, redisServerBinary } from "../../infra/src/system-packages.ts";
import { uniqueName } from "../support/env.ts";

const ROOT = join(import.meta.dir, "..", "..");
const isRoot = process.getuid?.() === 0;
const skipReason = isRoot
  ? null
  : "the private checkout test needs root: it creates a network namespace, and PostgreSQL runs as another user only under root";
if (skipReason) console.warn(`skipped: ${skipReason}`);

const namespace = uniqueName("pss-private").slice(0, 40);
const privateDir = mkdtempSync(join(tmpdir(), "pss-private-"));
const checkout = join(privateDir, "checkout");
let namespaceCreated = false;
let start: { proc: Bun.Subprocess<"ignore", "pipe", "pipe">; output: () => string } | null = null;

/** A newcomer's shell: no server URLs (this run's are in the environment), the same tools and caches. */
function newcomerEnv(): Record<string, string> {
  const keep = ["PATH", "HOME", "LANG", "JAVA_HOME", "PSS_CACHE_DIR", "XDG_CACHE_HOME", "MAVEN_OPTS", "CI"];
  return Object.fromEntries(keep.flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])));
}

async function run(cmd: string[], opts: { cwd?: string; timeoutMs?: number } = {}) {
  const proc = Bun.spawn(cmd, {
    cwd: opts.cwd ?? checkout,
    env: newcomerEnv(),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), opts.timeoutMs ?? 60_000);
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  return { out, err, code };
}

/** A command inside the namespace, from the private checkout. */
const inNamespace = (cmd: string[], timeoutMs?: number) =>
  run(["ip", "netns", "exec", namespace, ...cmd], { timeoutMs });

beforeAll(async () => {
  if (skipReason) return;
  // The checkout as a commit of this working tree would have it (tracked and new files, not what .gitignore
  // leaves out), with the pinned Bun this run already installed; its dependencies come from Bun's cache.
  expect(
    await run(
      [
        "bash",
        "-c",
        `set -o pipefail; mkdir '${checkout}' && git ls-files -z --cached --others --exclude-standard | tar --null --ignore-failed-read -T - -cf - | tar -xf - -C '${checkout}' && cp -a tools/bun/node_modules '${checkout}/tools/bun/'`,
      ],
      { cwd: ROOT },
    ),
  ).toMatchObject({ code: 0 });
  expect(
    await run([join(checkout, "tools/bun/node_modules/bun/bin/bun.exe"), "install", "--frozen-lockfile", "--silent"], {
      timeoutMs: 120_000,
    }),
  ).toMatchObject({ code: 0 });
  // What a first `up` downloads or installs, fetched out here: the namespace has no network. (This run's own
  // servers may have come from testcontainers, which needs none of it.)
  await Promise.all([postgresBinDir(), redisServerBinary()]);
  if (!Bun.which("ip")) await aptInstall(["iproute2"]);
  for (const name of ["kafka", "opensearch", "s3proxy"])
    await resolveJars(join(checkout, "infra", "maven", name, "pom.xml"), defaultPaths().cacheDir, name);
  expect(await run(["ip", "netns", "add", namespace], { cwd: ROOT })).toMatchObject({ code: 0 });
  namespaceCreated = true;
  expect(await run(["ip", "netns", "exec", namespace, "ip", "link", "set", "lo", "up"], { cwd: ROOT })).toMatchObject({
    code: 0,
  });
}, 180_000);

afterAll(async () => {
  if (skipReason) return;
  if (start && start.proc.exitCode === null && start.proc.signalCode === null) {
    try {
      process.kill(-start.proc.pid, "SIGKILL");
    } catch {}
    await start.proc.exited;
  }
  if (namespaceCreated) {
    if (existsSync(join(checkout, "node_modules")))
      await inNamespace(["npm", "run", "--silent", "infra", "--", "down"]);
    // Whatever still runs in the namespace was started by this test.
    const pids = (await run(["ip", "netns", "pids", namespace], { cwd: ROOT })).out.split("\n").filter(Boolean);
    for (const pid of pids) {
      try {
        process.kill(Number(pid), "SIGKILL");
      } catch {}
    }
    await run(["ip", "netns", "del", namespace], { cwd: ROOT });
  }
  const record = join(checkout, ".data", "postgres", "server-dir");
  const cluster = existsSync(record) ? readFileSync(record, "utf8").trim() : null;
  if (cluster?.startsWith(`${SERVER_USER_HOME}/`)) rmSync(cluster, { recursive: true, force: true });
  rmSync(privateDir, { recursive: true, force: true });
}, 120_000);

test.skipIf(skipReason !== null)(
  "from a checkout under a 0700 directory, npm run infra -- up starts every server and keeps PostgreSQL's files where postgres can reach them",
  async () => {
    // The premise: the server user cannot enter the checkout.
    expect(statSync(privateDir).mode & 0o777).toBe(0o700);
    expect((await run(["runuser", "-u", "postgres", "--", "test", "-x", checkout], { cwd: "/" })).code).not.toBe(0);

    const up = await inNamespace(["npm", "run", "--silent", "infra", "--", "up"], 240_000);
    expect({ code: up.code, err: up.code === 0 ? "" : up.err }).toEqual({ code: 0, err: "" });
    expect(up.out).toContain("DATABASE_URL=postgres://pss:pss@127.0.0.1:55432/pss");
    expect(up.out).toContain("OPENSEARCH_URL=http://127.0.0.1:9250");

    // The cluster is outside the checkout, in the directory of this checkout's own path, owned by postgres.
    const cluster = readFileSync(join(checkout, ".data", "postgres", "server-dir"), "utf8").trim();
    expect(cluster).toBe(serverDirOf(checkout));
    expect(cluster).not.toBe(serverDirOf(ROOT));
    expect(existsSync(join(cluster, "pgdata", "PG_VERSION"))).toBe(true);
    expect(existsSync(join(checkout, ".data", "postgres", "pgdata"))).toBe(false);
    const owner = await run(["stat", "-c", "%U", join(cluster, "pgdata")], { cwd: "/" });
    expect(owner.out.trim()).toBe("postgres");

    const status = await inNamespace(["npm", "run", "--silent", "infra", "--", "status"]);
    expect(status.code).toBe(0);
    expect(status.out.split("\n").filter((l) => /^\w+\s+ready\b/.test(l))).toHaveLength(5);
  },
  300_000,
);

test.skipIf(skipReason !== null)(
  "from that checkout, npm run migrate and npm start reach ready, and the API stores a partner's first PUT",
  async () => {
    const migrate = await inNamespace(["npm", "run", "--silent", "migrate"]);
    expect(migrate.code).toBe(0);
    expect(migrate.out + migrate.err).toMatch(/migrate: applied 0001/);

    // Its own session, so Ctrl-C reaches the whole group as a terminal's would.
    const proc = Bun.spawn(["setsid", "ip", "netns", "exec", namespace, "npm", "start"], {
      cwd: checkout,
      env: newcomerEnv(),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    let output = "";
    const collect = async (stream: ReadableStream<Uint8Array>) => {
      const decoder = new TextDecoder();
      for await (const chunk of stream) output = (output + decoder.decode(chunk)).slice(-200_000);
    };
    void collect(proc.stdout);
    void collect(proc.stderr);
    start = { proc, output: () => output };
    let exited = false;
    void proc.exited.then(() => {
      exited = true;
    });
    const deadline = Date.now() + 150_000;
    while (!output.includes("start: all services ready") && !exited && Date.now() < deadline) await Bun.sleep(250);
    expect(output).toContain("start: all services ready");

    const admin = await inNamespace(["npm", "run", "--silent", "admin", "--", "partners", "create", "--name", "Acme"]);
    expect(admin.code).toBe(0);
    const { apiKey } = JSON.parse(admin.out) as { apiKey: string };
    const put = await inNamespace([
      "curl",
      "-s",
      "--max-time",
      "10",
      "-X",
      "PUT",
      "-H",
      `Authorization: Bearer ${apiKey}`,
      "-H",
      "Content-Type: application/json",
      "http://127.0.0.1:8080/partner/v1/brokers/B-1",
      "-d",
      '{"name":"Jane Broker","email":"jane@acme-brokers.example"}',
    ]);
    expect(JSON.parse(put.out)).toMatchObject({ status: "success", message: "Broker created" });

    // Ctrl-C: the services stop cleanly; the servers keep running for the next start.
    process.kill(-proc.pid, "SIGINT");
    const stopped = await Promise.race([proc.exited.then(() => true), Bun.sleep(60_000).then(() => false)]);
    expect(stopped).toBe(true);
    expect(output).toContain("start: services stopped");

    const down = await inNamespace(["npm", "run", "--silent", "infra", "--", "down"], 90_000);
    expect(down.code).toBe(0);
    const status = await inNamespace(["npm", "run", "--silent", "infra", "--", "status"]);
    expect(status.out.split("\n").filter((l) => /^\w+\s+stopped\b/.test(l))).toHaveLength(5);
  },
  300_000,
);
