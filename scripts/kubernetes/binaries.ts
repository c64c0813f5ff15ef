// The Kubernetes binaries the chart test runs, built from their Go modules (the Go module proxy) with the machine's
// Go, once per machine, like the compose plugin (scripts/containers/compose-plugin.ts): kube-apiserver,
// kube-controller-manager, kube-scheduler, kubelet, kube-proxy and kubectl from k8s.io/kubernetes, Helm, and CoreDNS.
// Binaries are cached in ~/.cache/partner-syndication-service/; nothing is downloaded but Go modules. Builds run
// at nice 19: they are long and CPU-bound, and other work shares the machine.
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultPaths } from "../../infra/src/index.ts";
import { runCommand } from "../../infra/src/process.ts";

// 1.34: these machines use cgroup v1, which the kubelet refuses from 1.35 by default; 1.36+ wants containerd 2.x and
// Debian 12 ships 1.6.
export const KUBERNETES_VERSION = "v1.34.2";
export const HELM_VERSION = "v3.22.0";
export const COREDNS_VERSION = "v1.12.4";
export const KUBE_COMMANDS = [
  "kube-apiserver",
  "kube-controller-manager",
  "kube-scheduler",
  "kubelet",
  "kube-proxy",
  "kubectl",
] as const;
export type KubeCommand = (typeof KUBE_COMMANDS)[number];

export interface KubeBinaries {
  dir: string;
  path(command: KubeCommand | "helm" | "coredns"): string;
}

type Log = (line: string) => void;

export function goBinary(): string | null {
  return Bun.which("go") ?? (existsSync("/usr/local/go/bin/go") ? "/usr/local/go/bin/go" : null);
}

export function cacheRoot(): string {
  return defaultPaths().cacheDir;
}

export function helmPath(): string {
  return join(cacheRoot(), "helm", `helm-${HELM_VERSION}`);
}

function kubeDir(): string {
  return join(cacheRoot(), `kubernetes-${KUBERNETES_VERSION}`);
}

function corednsPath(): string {
  return join(cacheRoot(), "coredns", `coredns-${COREDNS_VERSION}`);
}

/** A module's source as a writable copy (the module cache is read-only; builds with replace directives need one). */
export async function moduleCopy(go: string, module: string): Promise<string> {
  const info = JSON.parse(await runCommand([go, "mod", "download", "-json", module], { cwd: tmpdir() })) as {
    Dir: string;
  };
  const src = mkdtempSync(join(tmpdir(), "pss-go-src-"));
  cpSync(info.Dir, src, { recursive: true });
  await runCommand(["chmod", "-R", "u+w", src]);
  return src;
}

export async function goBuild(go: string, src: string, pkg: string, out: string, ldflags: string): Promise<void> {
  mkdirSync(join(out, ".."), { recursive: true });
  await runCommand(["nice", "-n", "19", go, "build", "-trimpath", "-ldflags", ldflags, "-o", `${out}.part`, pkg], {
    cwd: src,
    env: { CGO_ENABLED: "0", GOFLAGS: "-mod=mod" },
  });
  renameSync(`${out}.part`, out);
  chmodSync(out, 0o755);
}

/**
 * k8s.io/kubernetes as a module: its go.mod points the k8s.io/* staging modules at ./staging with `replace` and
 * requires them at v0.0.0; without the repository's go.work those are the published modules of the same release.
 */
export function pinStagingModules(goMod: string, version: string): string {
  const staging = `v0.${version.slice(3)}`; // v1.34.2 → v0.34.2
  return goMod
    .replace(/^\s*k8s\.io\/[\w-]+ => \.\/staging\/src\/k8s\.io\/[\w-]+\n/gm, "")
    .replace(/^(\s*k8s\.io\/[\w-]+) v0\.0\.0$/gm, `$1 ${staging}`);
}

async function buildKubernetes(go: string, log: Log): Promise<void> {
  const missing = KUBE_COMMANDS.filter((c) => !existsSync(join(kubeDir(), c)));
  if (missing.length === 0) return;
  const started = Date.now();
  log(
    `building Kubernetes ${KUBERNETES_VERSION} (${missing.join(", ")}) from the Go module proxy (first run only, about 12 min)`,
  );
  const src = await moduleCopy(go, `k8s.io/kubernetes@${KUBERNETES_VERSION}`);
  try {
    for (const f of ["go.work", "go.work.sum", "vendor"]) rmSync(join(src, f), { recursive: true, force: true });
    writeFileSync(
      join(src, "go.mod"),
      pinStagingModules(readFileSync(join(src, "go.mod"), "utf8"), KUBERNETES_VERSION),
    );
    const [major, minor] = KUBERNETES_VERSION.slice(1).split(".");
    const ldflags = ["-s", "-w"];
    for (const pkg of ["k8s.io/component-base/version", "k8s.io/client-go/pkg/version"])
      ldflags.push(
        `-X ${pkg}.gitVersion=${KUBERNETES_VERSION}`,
        `-X ${pkg}.gitMajor=${major}`,
        `-X ${pkg}.gitMinor=${minor}`,
        `-X ${pkg}.gitTreeState=clean`,
      );
    for (const command of missing) {
      const t0 = Date.now();
      await goBuild(go, src, `./cmd/${command}`, join(kubeDir(), command), ldflags.join(" "));
      log(`built ${command} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    }
  } finally {
    rmSync(src, { recursive: true, force: true });
  }
  log(`built Kubernetes in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

/** Helm, built when missing (cheap to call when it is there). Null when it cannot be had (no Go). */
export async function ensureHelm(opts: { build: boolean; log: Log }): Promise<string | null> {
  const path = helmPath();
  if (existsSync(path)) return path;
  const go = goBinary();
  if (!opts.build || !go) return null;
  const t0 = Date.now();
  opts.log(`building Helm ${HELM_VERSION} from the Go module proxy (first run only, about 2.5 min)`);
  const src = await moduleCopy(go, `helm.sh/helm/v3@${HELM_VERSION}`);
  try {
    // As Helm's Makefile: the Kubernetes version `helm template` and `helm lint` assume is client-go's (v0.37 → 1.37).
    const [, minor] = /^\s*k8s\.io\/client-go v0\.(\d+)\./m.exec(readFileSync(join(src, "go.mod"), "utf8")) ?? [];
    const ldflags = ["-s", "-w", `-X helm.sh/helm/v3/internal/version.version=${HELM_VERSION}`];
    if (minor)
      for (const pkg of ["helm.sh/helm/v3/pkg/lint/rules", "helm.sh/helm/v3/pkg/chartutil"])
        ldflags.push(`-X ${pkg}.k8sVersionMajor=1`, `-X ${pkg}.k8sVersionMinor=${minor}`);
    await goBuild(go, src, "./cmd/helm", path, ldflags.join(" "));
  } finally {
    rmSync(src, { recursive: true, force: true });
  }
  opts.log(`built Helm in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return path;
}

async function buildCoredns(go: string, log: Log): Promise<void> {
  if (existsSync(corednsPath())) return;
  const t0 = Date.now();
  log(`building CoreDNS ${COREDNS_VERSION} from the Go module proxy (first run only, about 4 min)`);
  const src = await moduleCopy(go, `github.com/coredns/coredns@${COREDNS_VERSION}`);
  try {
    await goBuild(go, src, ".", corednsPath(), "-s -w");
  } finally {
    rmSync(src, { recursive: true, force: true });
  }
  log(`built CoreDNS in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}

/** Every binary the one-node cluster needs, built where missing. Throws when Go is missing and a build is needed. */
export async function ensureKubeBinaries(opts: { build: boolean; log: Log }): Promise<KubeBinaries> {
  const all = () =>
    KUBE_COMMANDS.every((c) => existsSync(join(kubeDir(), c))) && existsSync(helmPath()) && existsSync(corednsPath());
  if (!all()) {
    const go = goBinary();
    if (!opts.build) throw new Error("the Kubernetes binaries are not built");
    if (!go) throw new Error("the Kubernetes binaries are not built, and there is no Go to build them");
    await buildKubernetes(go, opts.log);
    await ensureHelm(opts);
    await buildCoredns(go, opts.log);
  }
  return {
    dir: kubeDir(),
    path: (command) =>
      command === "helm" ? helmPath() : command === "coredns" ? corednsPath() : join(kubeDir(), command),
  };
}

/**
 * kubectl's and Helm's environment: their discovery, HTTP and repository caches in the checkout's data directory,
 * not in the user's home (kubectl writes ~/.kube/cache otherwise, which would outlive the cluster).
 */
export function kubeToolEnv(): Record<string, string | undefined> {
  const home = join(defaultPaths().dataDir, "kubernetes", "tool-home");
  return {
    ...process.env,
    KUBECACHEDIR: join(home, "kube-cache"),
    HELM_CACHE_HOME: join(home, "helm-cache"),
    HELM_CONFIG_HOME: join(home, "helm-config"),
    HELM_DATA_HOME: join(home, "helm-data"),
  };
}
