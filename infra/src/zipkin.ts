// The trace store: Zipkin (Maven Central's exec jar, its UI included) on the local JDK, spans kept in memory (the
// newest 100,000; a restart starts empty: it is for following requests now, not an archive). Bound to loopback.
// Optional: `npm start` runs it unless PSS_ZIPKIN=0, `npm run infra -- up zipkin` alone; `up` without a part name
// leaves it out (the tests start their own, test/support/private-zipkin.ts).
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Component, InfraPaths } from "./component.ts";
import { javaBinary, resolveJars } from "./maven.ts";
import { isPortOpen, readPid, removeFile, startDetached, stopPid } from "./process.ts";

export const ZIPKIN_PORT = 59411;

/** The exec jar in a resolved jar directory. */
export function zipkinJar(libDir: string): string {
  const jar = readdirSync(libDir).find((f) => f.startsWith("zipkin-server-") && f.endsWith(".jar"));
  if (!jar) throw new Error(`no zipkin-server jar in ${libDir}`);
  return join(libDir, jar);
}

/** The java arguments of a Zipkin on 127.0.0.1:port with in-memory storage. */
export function zipkinArgs(jar: string, port: number): string[] {
  return [
    "-Xms64m",
    "-Xmx384m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-Djava.awt.headless=true",
    "-jar",
    jar,
    `--armeria.ports[0].port=${port}`,
    "--armeria.ports[0].ip=127.0.0.1",
    "--armeria.ports[0].protocols=http",
    "--zipkin.storage.type=mem",
    "--zipkin.storage.mem.max-spans=100000",
    "--logging.level.root=WARN",
  ];
}

/** Zipkin answers on `url` (its health endpoint says UP). */
export async function zipkinReady(url: string): Promise<boolean> {
  const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
  return res.ok && ((await res.json()) as { status?: string }).status === "UP";
}

export function zipkinPom(paths: InfraPaths): string {
  return join(paths.root, "infra", "maven", "zipkin", "pom.xml");
}

export function zipkinComponent(paths: InfraPaths): Component {
  const dir = join(paths.dataDir, "zipkin");
  const logFile = join(paths.dataDir, "logs", "zipkin.log");
  const pidFile = join(dir, "server.pid");
  const url = `http://127.0.0.1:${ZIPKIN_PORT}`;
  return {
    name: "zipkin",
    // What the services read: the span intake. The UI is at the same host, path /zipkin/.
    env: { name: "TRACING_ZIPKIN_URL", value: `${url}/api/v2/spans` },
    logFile,
    readyTimeoutMs: 90_000,
    async running() {
      return readPid(pidFile) !== null;
    },
    async start() {
      const libs = await resolveJars(zipkinPom(paths), paths.cacheDir, "zipkin");
      if (await isPortOpen(ZIPKIN_PORT)) {
        throw new Error(
          `port ${ZIPKIN_PORT} is in use by a process this runner did not start; stop it or set TRACING_ZIPKIN_URL`,
        );
      }
      mkdirSync(dir, { recursive: true });
      startDetached({ cmd: javaBinary(), args: zipkinArgs(zipkinJar(libs), ZIPKIN_PORT), cwd: dir, logFile, pidFile });
    },
    ready: () => zipkinReady(url),
    async stop() {
      const pid = readPid(pidFile);
      if (pid) await stopPid(pid, { graceMs: 20_000 });
      removeFile(pidFile);
    },
  };
}
