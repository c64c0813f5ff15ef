// A throw-away copy of the compose stack for tests: its own project name (containers, networks and volumes of its
// own), host ports picked free (never the shared servers' fixed ones), the image variables `npm run images` wrote,
// and an override file that lets media and webhooks reach a photo host and a receiver on this machine
// (host.docker.internal). `down()` removes everything it made, volumes included.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readComposeEnv } from "../../../scripts/containers/compose-env.ts";
import { engineAnswers, nofileLimit } from "../../../scripts/containers/engine.ts";
import { IMAGE_VARIABLES } from "../../../scripts/containers/image-variables.ts";

export const ROOT = join(import.meta.dir, "..", "..", "..");

/** Why the container tests cannot run here, or null: they need an engine and the images (npm test sees to both). */
export async function containerTestsUnavailable(): Promise<string | null> {
  if (process.env.PSS_CONTAINER_TESTS !== "1")
    return "PSS_CONTAINER_TESTS is not 1 (npm test sets it once an engine answers and the images are built)";
  if (!(await engineAnswers())) return "no Docker engine answers";
  return null;
}

export interface RunResult {
  code: number;
  out: string;
  err: string;
}

/** Runs a command to its end; `clean` replaces this process's environment (else it is inherited). */
export async function run(
  cmd: string[],
  opts: { env?: Record<string, string>; timeoutMs?: number; clean?: Record<string, string> } = {},
): Promise<RunResult> {
  const proc = Bun.spawn(cmd, {
    cwd: ROOT,
    env: { ...(opts.clean ?? process.env), ...opts.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: opts.timeoutMs ?? 300_000,
    killSignal: "SIGKILL",
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, out, err };
}

export async function must(
  cmd: string[],
  opts: { env?: Record<string, string>; timeoutMs?: number; clean?: Record<string, string> } = {},
): Promise<string> {
  const r = await run(cmd, opts);
  if (r.code !== 0)
    throw new Error(`${cmd.join(" ")} exited ${r.code}:\n${(r.err || r.out).trim().split("\n").slice(-25).join("\n")}`);
  return r.out;
}

export interface ComposeProject {
  name: string;
  env: Record<string, string>;
  compose(args: string[], timeoutMs?: number): Promise<string>;
  /** A compose command whose failure is the point: its exit code and output. */
  run(args: string[], timeoutMs?: number): Promise<RunResult>;
  /** psql in the postgres container: rows as arrays of fields (unaligned, tab-separated). */
  sql(query: string): Promise<string[][]>;
  /** Names of the running containers of a service. */
  containers(service: string): Promise<string[]>;
  logs(service: string, tail?: number): Promise<string>;
  down(): Promise<void>;
}

export function composeProject(opts: {
  prefix: string;
  apiPorts: string;
  smtpUiPort: number;
  hostPorts: { photos: number; receiver: number };
}): ComposeProject {
  const name = `${opts.prefix}-${crypto.randomUUID().slice(0, 8)}`;
  const dir = mkdtempSync(join(tmpdir(), `${name}-`));
  const override = join(dir, "compose.test.yml");
  const host = "host.docker.internal";
  writeFileSync(
    override,
    [
      "services:",
      // Every buyer of these tests is this host (one address), sending hundreds of inquiries a minute: the inquiry
      // limits would stop them.
      "  api:",
      "    environment:",
      '      LEAD_RATE_LIMIT_PER_ADDRESS: "0"',
      '      LEAD_RATE_LIMIT_PER_LISTING_ADDRESS: "0"',
      '      LEAD_RATE_LIMIT_GLOBAL_PER_MINUTE: "0"',
      "  media:",
      `    extra_hosts: ["${host}:host-gateway"]`,
      "    environment:",
      `      MEDIA_ALLOWED_HOSTS: "${host}:${opts.hostPorts.photos}"`,
      "  webhooks:",
      `    extra_hosts: ["${host}:host-gateway"]`,
      "    environment:",
      `      WEBHOOK_ALLOWED_HOSTS: "${host}:${opts.hostPorts.receiver}"`,
      "",
    ].join("\n"),
  );
  const images = Object.fromEntries(
    IMAGE_VARIABLES.flatMap((v) => (process.env[v.name] ? [[v.name, process.env[v.name]!]] : [])),
  );
  const env: Record<string, string> = {
    ...readComposeEnv(),
    ...images,
    PSS_API_PORT: opts.apiPorts,
    PSS_SMTP_UI_PORT: String(opts.smtpUiPort),
    PUBLIC_BASE_URL: "http://localhost",
    LOG_LEVEL: "info",
    PSS_OPENSEARCH_NOFILE: process.env.PSS_OPENSEARCH_NOFILE ?? String(nofileLimit()),
  };
  // Compose substitutes variables from its own environment: the test runner's (S3_ENDPOINT, LOG_LEVEL, ... of the
  // shared servers) must not leak into the stack, so it gets only what a shell needs plus the settings above.
  const shell = Object.fromEntries(
    ["PATH", "HOME", "DOCKER_HOST", "DOCKER_CONFIG", "TMPDIR"].flatMap((k) =>
      process.env[k] ? [[k, process.env[k]!]] : [],
    ),
  );
  const base = ["docker", "compose", "-p", name, "-f", join(ROOT, "docker-compose.yml"), "-f", override];
  const compose = async (args: string[], timeoutMs?: number) => {
    try {
      return await must([...base, ...args], { env, timeoutMs, clean: shell });
    } catch (err) {
      // `up --wait` names the container that did not become healthy: show what it said.
      const unhealthy = /container (\S+) (?:is unhealthy|exited)/.exec((err as Error).message)?.[1];
      if (!unhealthy) throw err;
      const logs = await run(["docker", "logs", "--tail", "30", unhealthy]);
      const health = await run(["docker", "inspect", "--format", "{{json .State.Health}}", unhealthy]);
      throw new Error(
        `${(err as Error).message}\n--- ${unhealthy} health: ${health.out.slice(-1500)}\n--- its last log lines:\n${logs.out}${logs.err}`,
      );
    }
  };
  return {
    name,
    env,
    compose,
    run: (args, timeoutMs) => run([...base, ...args], { env, timeoutMs, clean: shell }),
    async sql(query) {
      const out = await compose([
        "exec",
        "-T",
        "postgres",
        "psql",
        "-U",
        "pss",
        "-d",
        "pss",
        "-At",
        "-F",
        "\t",
        "-c",
        query,
      ]);
      return out
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => l.split("\t"));
    },
    async containers(service) {
      const out = await compose(["ps", "--status", "running", "--format", "{{.Name}}", service]);
      return out.split("\n").filter(Boolean).sort();
    },
    async logs(service, tail = 40) {
      return (await run([...base, "logs", "--no-color", "--tail", String(tail), service], { env, clean: shell })).out;
    },
    async down() {
      await run([...base, "down", "-v", "--remove-orphans", "-t", "5"], { env, timeoutMs: 120_000, clean: shell });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
