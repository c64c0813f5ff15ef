// A real OCI registry on this machine for the chart test (test/kubernetes/chart-production.test.ts): CNCF
// Distribution (github.com/distribution/distribution/v3), built from the Go module proxy once per machine like the
// other binaries (binaries.ts) with only the filesystem storage driver linked in, and run on a loopback port. Docker
// pushes to it (dockerd treats 127.0.0.0/8 registries as plain HTTP) and the node's containerd pulls from it (the
// hosts.toml written into the CRI's registry config directory says plain HTTP). Its storage is a cache under
// .data/kubernetes/registry (pushing an unchanged layer again costs nothing), emptied when it grows past a bound.
import { existsSync, mkdirSync, openSync, closeSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defaultPaths } from "../../infra/src/index.ts";
import { cacheRoot, goBinary, goBuild, moduleCopy } from "./binaries.ts";

export const REGISTRY_VERSION = "v3.0.0";
const MODULE = "github.com/distribution/distribution/v3";
/** Above this the cached storage is emptied at start (old service images pile up otherwise). */
const STORAGE_BOUND_BYTES = 4 * 1024 ** 3;

type Log = (line: string) => void;

export function registryBinaryPath(): string {
  return join(cacheRoot(), "registry", `registry-${REGISTRY_VERSION}`);
}

/**
 * The registry's own command links every storage driver (Azure, GCS, S3 and their SDKs); this one only the local
 * filesystem's, which is all a registry on the test machine needs, and builds in a fraction of the time.
 */
const MAIN = `package main

import (
	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
)

func main() {
	// nolint:errcheck
	registry.RootCmd.Execute()
}
`;

/** The registry binary, built when missing. Throws when it cannot be had (no Go, no module proxy). */
export async function ensureRegistryBinary(opts: { log: Log }): Promise<string> {
  const path = registryBinaryPath();
  if (existsSync(path)) return path;
  const go = goBinary();
  if (!go) throw new Error("no registry binary and no Go to build it");
  const t0 = Date.now();
  opts.log(`building the CNCF Distribution registry ${REGISTRY_VERSION} from the Go module proxy (first run only)`);
  const src = await moduleCopy(go, `${MODULE}@${REGISTRY_VERSION}`);
  try {
    mkdirSync(join(src, "cmd", "pss-registry"), { recursive: true });
    writeFileSync(join(src, "cmd", "pss-registry", "main.go"), MAIN);
    await goBuild(go, src, "./cmd/pss-registry", path, `-s -w -X ${MODULE}/version.version=${REGISTRY_VERSION}`);
  } finally {
    rmSync(src, { recursive: true, force: true });
  }
  opts.log(`built the registry in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return path;
}

export interface Registry {
  /** host:port, as image references name it (127.0.0.1:<port>). */
  address: string;
  stop(): Promise<void>;
}

function sizeOf(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).size;
  }
  return total;
}

export function registryStorageDir(): string {
  return join(defaultPaths().dataDir, "kubernetes", "registry");
}

/** The registry on a free loopback port; `hostsDir` (the CRI's config_path) learns it is plain HTTP. */
export async function startRegistry(opts: { binary: string; hostsDir: string; log: Log }): Promise<Registry> {
  const storage = registryStorageDir();
  if (existsSync(storage) && sizeOf(storage) > STORAGE_BOUND_BYTES) {
    opts.log(`registry storage over ${STORAGE_BOUND_BYTES / 1024 ** 3} GB: emptied`);
    rmSync(storage, { recursive: true, force: true });
  }
  mkdirSync(storage, { recursive: true });
  const port = await freeLoopbackPort();
  const address = `127.0.0.1:${port}`;
  const runDir = join(defaultPaths().dataDir, "kubernetes", "registry-run");
  mkdirSync(runDir, { recursive: true });
  const config = join(runDir, "config.yml");
  writeFileSync(
    config,
    `version: 0.1
log: { level: warn, accesslog: { disabled: true } }
storage:
  filesystem: { rootdirectory: ${storage} }
  delete: { enabled: true }
  cache: { blobdescriptor: inmemory }
http:
  addr: ${address}
  # The debug server would listen on a port of its own: off.
`,
  );
  const logs = join(defaultPaths().dataDir, "logs", "kubernetes");
  mkdirSync(logs, { recursive: true });
  const fd = openSync(join(logs, "registry.log"), "w");
  const proc = Bun.spawn([opts.binary, "serve", config], { stdin: "ignore", stdout: fd, stderr: fd, cwd: runDir });
  closeSync(fd);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ok = await fetch(`http://${address}/v2/`, { signal: AbortSignal.timeout(2_000) })
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ok) break;
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(
        `the registry did not answer on ${address} (${proc.exitCode !== null ? `exited ${proc.exitCode}` : "30 s"}; log .data/logs/kubernetes/registry.log)`,
      );
    }
    await Bun.sleep(200);
  }
  const hosts = join(opts.hostsDir, address);
  mkdirSync(hosts, { recursive: true });
  writeFileSync(
    join(hosts, "hosts.toml"),
    `server = "http://${address}"\n\n[host."http://${address}"]\n  capabilities = ["pull", "resolve"]\n`,
  );
  opts.log(`registry ${REGISTRY_VERSION} on ${address} (storage ${storage})`);
  return {
    address,
    async stop() {
      rmSync(hosts, { recursive: true, force: true });
      if (proc.exitCode !== null) return;
      proc.kill("SIGTERM");
      const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(10_000).then(() => false)]);
      if (!exited) proc.kill("SIGKILL");
      await proc.exited;
    },
  };
}

async function freeLoopbackPort(): Promise<number> {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}
