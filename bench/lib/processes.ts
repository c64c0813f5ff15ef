// Child processes the benchmark drives: the API and the marketplace under test, the bare baseline server, the load generator.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { localWebhookKeyEnv } from "../../scripts/local-webhook-key.ts";
import { freePort } from "../../test/support/ports.ts";

export const ROOT = join(import.meta.dir, "..", "..");

export interface ApiProcess {
  url: string;
  pid: number;
  /** The separate relay process (startApiProcess), for CPU accounting. */
  relayPid?: number;
  rssMb(): number;
  stop(): Promise<void>;
}

export { freePort };

export function rssMbOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 102.4) / 10;
}

export async function waitHttp(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (
      await fetch(url).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await Bun.sleep(100);
  }
  throw new Error(`${url} did not answer within ${timeoutMs / 1000} s`);
}

/**
 * The command that runs a service's entry point. With BENCH_PROFILE_DIR set, each process writes a CPU profile
 * (Chrome format and a Markdown summary) there when it exits: how the profiles in docs/benchmarks.md were taken.
 */
export function serviceCommand(entry: string, name = entry.split("/")[1] ?? "service"): string[] {
  const dir = process.env.BENCH_PROFILE_DIR;
  if (!dir) return [process.execPath, entry];
  const stamp = `${name}-${Date.now()}`;
  return [process.execPath, "--cpu-prof", "--cpu-prof-md", `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${stamp}`, entry];
}

/**
 * The API as deployed for throughput: API processes with the relay off, plus one relay-only process, so the
 * relay does not share the API's event loop. `stop` stops both.
 */
export async function startApiProcess(env: Record<string, string>): Promise<ApiProcess> {
  const relayPort = await freePort();
  const relay = Bun.spawn(serviceCommand("services/api/src/relay-main.ts", "relay"), {
    cwd: ROOT,
    env: { ...process.env, ...env, HEALTH_PORT: String(relayPort), LOG_LEVEL: env.LOG_LEVEL ?? "warn" },
    stdout: "ignore",
    stderr: "inherit",
  });
  await waitHttp(`http://127.0.0.1:${relayPort}/readyz`);
  const api = await startApiOnly({ ...env, OUTBOX_RELAY_ENABLED: "false" });
  return {
    ...api,
    relayPid: relay.pid,
    async stop() {
      await api.stop();
      relay.kill("SIGTERM");
      await Promise.race([relay.exited, Bun.sleep(20_000)]);
      relay.kill("SIGKILL");
    },
  };
}

/** One service process serving HTTP: `ports` names its public and health ports in its own variables. */
async function startHttpService(
  entry: string,
  name: string,
  env: Record<string, string>,
  ports: (port: number, healthPort: number) => Record<string, string>,
): Promise<ApiProcess> {
  const port = await freePort();
  const healthPort = await freePort();
  const proc = Bun.spawn(serviceCommand(entry, name), {
    cwd: ROOT,
    env: { ...process.env, ...env, ...ports(port, healthPort), LOG_LEVEL: env.LOG_LEVEL ?? "warn" },
    stdout: "ignore",
    stderr: "inherit",
  });
  await waitHttp(`http://127.0.0.1:${healthPort}/readyz`);
  return {
    url: `http://127.0.0.1:${port}`,
    pid: proc.pid,
    rssMb: () => rssMbOf(proc.pid),
    async stop() {
      proc.kill("SIGTERM");
      await Promise.race([proc.exited, Bun.sleep(20_000)]);
      proc.kill("SIGKILL");
    },
  };
}

/** One API process (relay and all, as `env` says), without a separate relay process. */
export function startApiOnly(env: Record<string, string>): Promise<ApiProcess> {
  // One API process unless a scenario asks for more (api-workers): its RSS is one process's.
  // The API needs a WEBHOOK_SECRET_KEY: the one `npm start` uses (generated once under .data/) unless set.
  const withKey = { ...localWebhookKeyEnv(process.env, join(ROOT, ".data")), API_WORKERS: "1", ...env };
  return startHttpService("services/api/src/main.ts", "api", withKey, (port, healthPort) => ({
    API_PORT: String(port),
    API_HEALTH_PORT: String(healthPort),
  }));
}

/** One marketplace process (services/marketplace: buyers' pages, search, inquiries), as `npm start` runs it. */
export function startMarketplaceProcess(env: Record<string, string>): Promise<ApiProcess> {
  return startHttpService("services/marketplace/src/main.ts", "marketplace", env, (port, healthPort) => ({
    MARKETPLACE_PORT: String(port),
    HEALTH_PORT: String(healthPort),
  }));
}

export async function startBareServer(): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "bare-server.ts"), "0"], {
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proc.stdout.getReader();
  const { value } = await reader.read();
  const { port } = JSON.parse(new TextDecoder().decode(value).split("\n")[0]!) as { port: number };
  reader.releaseLock();
  return { url: `http://127.0.0.1:${port}`, pid: proc.pid, stop: async () => void (proc.kill(), await proc.exited) };
}

export interface LoadSpec {
  url: string;
  mode: "get" | "new" | "update" | "repeat" | "lead" | "batch-new" | "batch-update" | "feed";
  /** Feed mode: events per page. */
  pageSize?: number;
  /** Batch modes: items per request. */
  batchSize?: number;
  salt?: number;
  connections: number;
  durationSeconds: number;
  path?: string;
  key?: string;
  broker?: string;
  prefix?: string;
  offset?: number;
  existing?: number;
  rate?: number;
  /** mode "lead": the service listing IDs inquiries go to, round robin. */
  listingIds?: string[];
  bodyOptions?: { descriptionLength?: number; photos?: number };
  /** Sent as User-Agent (buyer pages count only what a browser asks for). */
  userAgent?: string;
  /** mode "get": cycle through this many distinct visitors (User-Agent suffixes, X-Forwarded-For addresses). */
  visitors?: number;
  /** mode "get": these paths in turn instead of `path`. */
  paths?: string[];
  /** Sent as Cookie (the portal's session). */
  cookie?: string;
}

export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  /** 99.9th percentile (ms). */
  p999: number;
  errors: number;
  non2xx: number;
  sent: number;
  /** Batch modes: items answered with an error inside 200 answers. */
  itemFailures?: number;
}

/** Runs autocannon under Node in its own process. */
export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const proc = Bun.spawn(["node", join(import.meta.dir, "load.mjs"), JSON.stringify(spec)], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`load generator failed (${code}): ${err}`);
  return JSON.parse(out.trim().split("\n").pop()!) as LoadResult;
}

export interface OpenLoopSpec {
  url: string;
  mode: "new" | "update";
  /** Arrivals per second. */
  rate: number;
  durationSeconds: number;
  key: string;
  broker: string;
  prefix: string;
  offset?: number;
  existing?: number;
  /** Makes update bodies differ from any earlier run's, so none is a no-op. */
  salt?: number;
  bodyOptions?: { descriptionLength?: number; photos?: number };
  /** Report every request slower than this (ms) with the time it was due. */
  traceSlowMs?: number;
}

export interface OpenLoopResult extends LoadResult {
  maxInFlight: number;
  /** With traceSlowMs: [epoch ms the request was due, latency ms]. */
  slow?: [number, number][];
}

/** Fixed-rate arrivals, latency from each request's due time (bench/lib/open-loop.mjs), under Node. */
export async function runOpenLoop(spec: OpenLoopSpec): Promise<OpenLoopResult> {
  const proc = Bun.spawn(["node", join(import.meta.dir, "open-loop.mjs"), JSON.stringify({ offset: 0, ...spec })], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`open-loop generator failed (${code}): ${err}`);
  return JSON.parse(out.trim().split("\n").pop()!) as OpenLoopResult;
}
