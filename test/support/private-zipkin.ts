// A Zipkin of a test's own (the trace store, infra/src/zipkin.ts) on a free loopback port, which the test may stop
// and start again (an outage of the store) without touching anyone else's. Its jar comes from the runner's cache,
// resolved from Maven Central on first use (the infrastructure runner does the same), so the test runs on a fresh
// clone and in CI instead of skipping. Spans are kept in memory: a restart starts empty.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import type { Subprocess } from "bun";
import { defaultPaths } from "../../infra/src/index.ts";
import { javaBinary, resolveJars } from "../../infra/src/maven.ts";
import { zipkinArgs, zipkinJar, zipkinPom, zipkinReady } from "../../infra/src/zipkin.ts";
import { freePort } from "./ports.ts";

/** One span as Zipkin's API answers it (GET /api/v2/trace/{traceId}). */
export interface ZipkinSpan {
  traceId: string;
  id: string;
  parentId?: string;
  name: string;
  kind?: "SERVER" | "CLIENT" | "PRODUCER" | "CONSUMER";
  timestamp: number;
  duration: number;
  localEndpoint: { serviceName: string };
  tags?: Record<string, string>;
}

export interface PrivateZipkin {
  url: string;
  /** What a service's TRACING_ZIPKIN_URL is set to. */
  spansUrl: string;
  /** The spans of one trace (none while it is unknown). */
  trace(traceId: string): Promise<ZipkinSpan[]>;
  /** Traces whose spans carry tag=value (Zipkin's annotationQuery), newest first, within the last hour. */
  search(query: { serviceName?: string; annotationQuery?: string; limit?: number }): Promise<ZipkinSpan[][]>;
  /** Stops the server (requests to it are refused meanwhile). */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty, and waits until it answers. */
  start(): Promise<void>;
  destroy(): Promise<void>;
}

export async function startPrivateZipkin(): Promise<PrivateZipkin> {
  const paths = defaultPaths();
  const jar = zipkinJar(await resolveJars(zipkinPom(paths), paths.cacheDir, "zipkin"));
  const dir = mkdtempSync(`${tmpdir()}/pss-private-zipkin-`);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let proc: Subprocess | null = null;

  async function start() {
    if (proc) return;
    const started = Bun.spawn([javaBinary(), ...zipkinArgs(jar, port)], {
      cwd: dir,
      stdout: "ignore",
      stderr: "ignore",
    });
    proc = started;
    const deadline = Date.now() + 90_000;
    while (!(await zipkinReady(url).catch(() => false))) {
      if (started.exitCode !== null) throw new Error(`private Zipkin exited with ${started.exitCode}`);
      if (Date.now() > deadline) throw new Error("private Zipkin did not answer within 90 s");
      await Bun.sleep(250);
    }
  }

  async function stop() {
    const p = proc;
    proc = null;
    if (!p) return;
    p.kill("SIGTERM");
    const exited = await Promise.race([p.exited.then(() => true), Bun.sleep(15_000).then(() => false)]);
    if (!exited) {
      p.kill("SIGKILL");
      await p.exited;
    }
  }

  await start();
  return {
    url,
    spansUrl: `${url}/api/v2/spans`,
    async trace(traceId) {
      const res = await fetch(`${url}/api/v2/trace/${traceId}`);
      if (res.status === 404) return [];
      if (!res.ok) throw new Error(`Zipkin answered ${res.status}`);
      return (await res.json()) as ZipkinSpan[];
    },
    async search(query) {
      const params = new URLSearchParams({ lookback: "3600000", limit: String(query.limit ?? 10) });
      if (query.serviceName) params.set("serviceName", query.serviceName);
      if (query.annotationQuery) params.set("annotationQuery", query.annotationQuery);
      const res = await fetch(`${url}/api/v2/traces?${params}`);
      if (!res.ok) throw new Error(`Zipkin answered ${res.status}`);
      return (await res.json()) as ZipkinSpan[][];
    },
    stop,
    start,
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
