// A real one-node Kubernetes on this machine for the chart test (test/kubernetes/): etcd, containerd, runc, the CNI
// plugins, conntrack and iptables from Debian's packages; the Kubernetes binaries, Helm and CoreDNS built from the Go
// module proxy (binaries.ts). containerd runs on its own socket with its own CRI configuration (never Docker's);
// the kubelet uses cgroupfs; CoreDNS runs on the host, bound to the node's address, which is the pods' DNS server.
// Everything lives under .data/kubernetes/ and /run/pss-k8s/; stop() stops it all and puts the host back as found
// (host-state.ts). The containerd image store is kept between runs, so imported images are imported once.
//
// Facts of these machines this relies on (issue 33): cgroup v1 (so Kubernetes 1.34, containerd 1.6); no
// CAP_SYS_RESOURCE (so restrict_oom_score_adj); dockerd's FORWARD policy DROP (so rules that accept the pods' traffic, allowPodTraffic); no
// public image registry (so a pause image built here, images imported from Docker, and a registry of our own:
// registry.ts).
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultPaths } from "../../infra/src/index.ts";
import { isAlive, runCommand } from "../../infra/src/process.ts";
import { aptInstall } from "../../infra/src/system-packages.ts";
import { hostMtu } from "../containers/engine.ts";
import { ensureKubeBinaries, type KubeBinaries, kubeToolEnv } from "./binaries.ts";
import {
  BRIDGE,
  existingHostDirs,
  firewallSnapshot,
  killProcessesWith,
  mountsUnder,
  readSysctls,
  removeBridge,
  removeChains,
  removePodCgroups,
  removeNewEmptyTables,
  removeNewHostDirs,
  removePodNetns,
  restoreSysctls,
  unmountUnder,
} from "./host-state.ts";
import { makePki, writeKubeconfig } from "./pki.ts";

export const DEBIAN_PACKAGES = [
  "etcd-server",
  "containerd",
  "runc",
  "containernetworking-plugins",
  "conntrack",
  "iptables",
];
const RUN_DIR = "/run/pss-k8s";
const POD_CIDR = "10.244.0.0/24";
const CLUSTER_CIDR = "10.244.0.0/16";
const SERVICE_CIDR = "10.96.0.0/16";
const SERVICE_IP = "10.96.0.1";
const NODE_NAME = "pss-node";
const PAUSE_IMAGE = "pss-local/pause:1";
const PORTS = { etcd: 23790, etcdPeer: 23800, apiserver: 16443 };

type Log = (line: string) => void;

export interface Cluster {
  nodeIp: string;
  kubeconfig: string;
  /** The CRI's registry configuration directory (config_path): <host:port>/hosts.toml per registry. */
  registryHostsDir: string;
  binaries: KubeBinaries;
  /** Runs kubectl against the cluster; its stdout. Throws with its stderr when it fails. */
  kubectl(args: string[], opts?: { timeoutMs?: number; stdin?: string }): Promise<string>;
  helm(args: string[], opts?: { timeoutMs?: number }): Promise<string>;
  /** Docker images into the node's image store (those it lacks), for imagePullPolicy IfNotPresent/Never. */
  importImages(tags: string[]): Promise<number>;
  /** A second tag of an image already in the node's store (an upgrade to a new tag, no build). */
  tagImage(from: string, to: string): Promise<void>;
  stop(): Promise<void>;
}

export function clusterPaths() {
  const base = join(defaultPaths().dataDir, "kubernetes");
  return {
    base,
    run: join(base, "cluster"),
    containerdRoot: join(base, "containerd"),
    containerdState: join(RUN_DIR, "containerd"),
    socket: join(RUN_DIR, "containerd", "containerd.sock"),
    logs: join(defaultPaths().dataDir, "logs", "kubernetes"),
    lock: join(RUN_DIR, "cluster.pid"),
  };
}

/** The address of the interface holding the default route: the node's IP. */
export function defaultRouteAddress(): string | null {
  try {
    const iface = readFileSync("/proc/net/route", "utf8")
      .split("\n")
      .slice(1)
      .map((l) => l.trim().split(/\s+/))
      .find((cols) => cols[1] === "00000000")?.[0];
    if (!iface) return null;
    const proc = Bun.spawnSync(["ip", "-4", "-o", "addr", "show", "dev", iface]);
    return /inet (\d+\.\d+\.\d+\.\d+)\//.exec(proc.stdout.toString())?.[1] ?? null;
  } catch {
    return null;
  }
}

/** Why a cluster cannot be started here (one line), or null. */
export function cannotStartCluster(): string | null {
  if (process.platform !== "linux") return `no Kubernetes on ${process.platform} here`;
  if (process.getuid?.() !== 0) return "starting a one-node Kubernetes needs root";
  if (!existsSync("/sys/fs/cgroup/memory") && !existsSync("/sys/fs/cgroup/cgroup.controllers"))
    return "this machine has no cgroups to run pods in";
  if (!defaultRouteAddress()) return "this machine has no default route to take the node's address from";
  if (!Bun.which("apt-get") && !existsSync("/usr/bin/containerd")) return "no containerd and no apt-get to install it";
  return null;
}

/** Everything a previous run left (killed mid-way): processes, mounts, netns, cgroups, chains, the bridge. */
async function sweep(log: Log): Promise<void> {
  const p = clusterPaths();
  const killed = (await killProcessesWith(`${RUN_DIR}/`)) + (await killProcessesWith(`${p.base}/`));
  if (killed) await Bun.sleep(500);
  const unmounted = await unmountUnder([p.run, p.containerdRoot, p.containerdState]);
  const netns = await removePodNetns();
  const cgroups = removePodCgroups();
  const chains = await removeChains();
  const bridge = await removeBridge();
  if (killed || unmounted || netns || cgroups || chains.length || bridge)
    log(
      `cleaned up: ${killed} processes, ${unmounted} mounts, ${netns} network namespaces, ${cgroups} cgroups, ${chains.length} iptables chains${bridge ? `, bridge ${BRIDGE}` : ""}`,
    );
}

interface Proc {
  name: string;
  proc: ReturnType<typeof Bun.spawn>;
}

export async function startCluster(opts: { log: Log; build?: boolean }): Promise<Cluster> {
  const log = opts.log;
  const why = cannotStartCluster();
  if (why) throw new Error(why);
  const p = clusterPaths();
  mkdirSync(RUN_DIR, { recursive: true });
  if (existsSync(p.lock)) {
    const pid = Number(readFileSync(p.lock, "utf8"));
    if (pid && pid !== process.pid && isAlive(pid)) throw new Error(`another one-node cluster runs here (pid ${pid})`);
  }
  writeFileSync(p.lock, String(process.pid));

  const missing = DEBIAN_PACKAGES.filter((pkg) => !dpkgInstalled(pkg));
  if (missing.length > 0) await aptInstall(missing);
  const binaries = await ensureKubeBinaries({ build: opts.build ?? true, log });

  await sweep(log);
  const before = { sysctls: readSysctls(), firewall: await firewallSnapshot(), dirs: existingHostDirs() };
  rmSync(p.run, { recursive: true, force: true });
  for (const f of ["iptables-before.txt", "iptables-after.txt"]) rmSync(join(p.logs, f), { force: true });
  for (const d of [p.run, p.containerdRoot, p.containerdState, p.logs]) mkdirSync(d, { recursive: true });
  const nodeIp = defaultRouteAddress() ?? "127.0.0.1"; // cannotStartCluster() checked there is one
  const procs: Proc[] = [];
  const kubeconfig = join(p.run, "admin.kubeconfig");
  const registryHostsDir = join(p.run, "registry-hosts");
  mkdirSync(registryHostsDir, { recursive: true });
  const run = (name: string, cmd: string[]) => {
    const fd = openSync(join(p.logs, `${name}.log`), "w");
    const proc = Bun.spawn(cmd, { stdin: "ignore", stdout: fd, stderr: fd, detached: true, cwd: p.run });
    closeSync(fd);
    proc.unref();
    procs.push({ name, proc });
    return proc;
  };
  const tail = (name: string) =>
    readFileSync(join(p.logs, `${name}.log`), "utf8")
      .trim()
      .split("\n")
      .slice(-3)
      .join(" | ")
      .slice(-600);
  const waitFor = async (what: string, name: string, check: () => Promise<boolean>, ms: number) => {
    const deadline = Date.now() + ms;
    const proc = procs.find((x) => x.name === name)?.proc;
    while (!(await check().catch(() => false))) {
      if (proc && proc.exitCode !== null) throw new Error(`${name} exited ${proc.exitCode}: ${tail(name)}`);
      if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s: ${tail(name)}`);
      await Bun.sleep(200);
    }
  };
  const kubectl = (args: string[], o: { timeoutMs?: number; stdin?: string } = {}) =>
    runTool([binaries.path("kubectl"), "--kubeconfig", kubeconfig, ...args], o);

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    const t0 = Date.now();
    // Pods first, through the kubelet (their network torn down by the CNI plugins), then the components in reverse.
    const kubelet = procs.find((x) => x.name === "kubelet")?.proc;
    if (kubelet && kubelet.exitCode === null)
      await kubectl(
        ["delete", "pods", "--all", "--all-namespaces", "--grace-period=5", "--wait=true", "--timeout=60s"],
        {
          timeoutMs: 90_000,
        },
      ).catch((err) => log(`stop: pods not all deleted: ${(err as Error).message.slice(0, 200)}`));
    for (const { proc } of [...procs].reverse()) {
      if (proc.exitCode !== null) continue;
      proc.kill("SIGTERM");
      const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(10_000).then(() => false)]);
      if (!exited) proc.kill("SIGKILL");
    }
    await runCommand([binaries.path("kube-proxy"), "--cleanup"]).catch(() => {});
    await sweep(log);
    // The runtime's state and sockets (tmpfs): nothing is mounted there any more.
    if (mountsUnder([RUN_DIR]).length === 0) rmSync(RUN_DIR, { recursive: true, force: true });
    else rmSync(p.lock, { force: true });
    const restored = restoreSysctls(before.sysctls);
    removeNewHostDirs(before.dirs);
    const tables = await removeNewEmptyTables(before.firewall);
    if (tables.left.length) log(`empty iptables tables left (no nft to delete them): ${tables.left.join(", ")}`);
    const after = await firewallSnapshot();
    const changed =
      after === before.firewall ? "" : "; iptables differ from before (see .data/logs/kubernetes/iptables-*.txt)";
    if (changed) {
      writeFileSync(join(p.logs, "iptables-before.txt"), before.firewall);
      writeFileSync(join(p.logs, "iptables-after.txt"), after);
    }
    log(
      `stopped the cluster in ${((Date.now() - t0) / 1000).toFixed(0)} s${restored.length ? `; restored ${restored.join(", ")}` : ""}${changed}`,
    );
  };

  try {
    const t0 = Date.now();
    const pki = await makePki(p.run, nodeIp, SERVICE_IP);
    const server = `https://${nodeIp}:${PORTS.apiserver}`;
    writeKubeconfig(kubeconfig, server, pki);

    // --- etcd --------------------------------------------------------------------------------------------------
    const etcdUrl = `http://127.0.0.1:${PORTS.etcd}`;
    run("etcd", [
      "/usr/bin/etcd",
      "--name=pss",
      `--data-dir=${join(p.run, "etcd")}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${PORTS.etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${PORTS.etcdPeer}`,
      `--initial-cluster=pss=http://127.0.0.1:${PORTS.etcdPeer}`,
      "--listen-metrics-urls=",
    ]);

    // --- containerd on its own socket, with the CRI plugin ------------------------------------------------------
    const cniConf = join(p.run, "cni");
    mkdirSync(cniConf, { recursive: true });
    writeFileSync(join(cniConf, "10-pss.conflist"), JSON.stringify(cniConfig(hostMtu()), null, 2));
    const containerdConfig = join(p.run, "containerd.toml");
    writeFileSync(containerdConfig, containerdToml(p, cniConf, registryHostsDir));
    run("containerd", ["/usr/bin/containerd", "--config", containerdConfig]);
    const ctr = (args: string[], o?: { stdin?: "pipe" }) =>
      Bun.spawn(["ctr", "--address", p.socket, "-n", "k8s.io", ...args], {
        stdin: o?.stdin ?? "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
    await waitFor("containerd", "containerd", async () => (await ctr(["version"]).exited) === 0, 30_000);
    // A previous run's containers (killed mid-way): removed, so the kubelet starts from nothing.
    for (const id of (await new Response(ctr(["containers", "ls", "-q"]).stdout).text()).split("\n").filter(Boolean))
      await ctr(["containers", "rm", id]).exited;

    await waitFor(
      "etcd",
      "etcd",
      async () => (await fetch(`${etcdUrl}/health`, { signal: AbortSignal.timeout(2000) })).ok,
      30_000,
    );

    // --- control plane --------------------------------------------------------------------------------------------
    run("kube-apiserver", [
      binaries.path("kube-apiserver"),
      `--etcd-servers=${etcdUrl}`,
      `--bind-address=${nodeIp}`,
      `--advertise-address=${nodeIp}`,
      `--secure-port=${PORTS.apiserver}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      `--client-ca-file=${pki.ca}`,
      `--tls-cert-file=${pki.apiserverCert}`,
      `--tls-private-key-file=${pki.apiserverKey}`,
      `--kubelet-client-certificate=${pki.adminCert}`,
      `--kubelet-client-key=${pki.adminKey}`,
      // The node's name resolves nowhere: logs, exec and port-forward go to its address.
      "--kubelet-preferred-address-types=InternalIP,Hostname",
      `--service-account-key-file=${pki.saPub}`,
      `--service-account-signing-key-file=${pki.saKey}`,
      "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
      "--authorization-mode=Node,RBAC",
      "--allow-privileged=true",
      "--profiling=false",
      "--event-ttl=30m",
    ]);
    await waitFor(
      "the API server",
      "kube-apiserver",
      async () => (await kubectl(["get", "--raw", "/readyz"], { timeoutMs: 5000 })).trim() === "ok",
      120_000,
    );
    const common = [
      `--kubeconfig=${kubeconfig}`,
      "--leader-elect=false",
      "--bind-address=127.0.0.1",
      "--profiling=false",
    ];
    run("kube-controller-manager", [
      binaries.path("kube-controller-manager"),
      ...common,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      `--root-ca-file=${pki.ca}`,
      `--service-account-private-key-file=${pki.saKey}`,
      `--cluster-signing-cert-file=${pki.ca}`,
      `--cluster-signing-key-file=${pki.caKey}`,
      "--use-service-account-credentials=true",
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      `--flex-volume-plugin-dir=${join(p.run, "volume-plugins")}`,
    ]);
    run("kube-scheduler", [
      binaries.path("kube-scheduler"),
      ...common,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
    ]);

    // --- the node: pause image, kubelet, kube-proxy, CoreDNS ----------------------------------------------------
    await ensurePauseImage(p.socket, log);
    const kubeletConfig = join(p.run, "kubelet.yaml");
    writeFileSync(kubeletConfig, kubeletYaml(p, pki.ca, nodeIp));
    run("kubelet", [
      binaries.path("kubelet"),
      `--config=${kubeletConfig}`,
      `--kubeconfig=${kubeconfig}`,
      `--root-dir=${join(p.run, "kubelet")}`,
      `--cert-dir=${join(p.run, "kubelet-pki")}`,
      `--node-ip=${nodeIp}`,
      `--hostname-override=${NODE_NAME}`,
    ]);
    await allowPodTraffic();
    const proxyConfig = join(p.run, "kube-proxy.yaml");
    writeFileSync(proxyConfig, kubeProxyYaml(kubeconfig, nodeIp));
    run("kube-proxy", [binaries.path("kube-proxy"), `--config=${proxyConfig}`]);
    const corefile = join(p.run, "Corefile");
    writeFileSync(corefile, corednsConfig(nodeIp, kubeconfig));
    run("coredns", [binaries.path("coredns"), "-conf", corefile]);

    // A StorageClass without a provisioner and volumes made here: the development servers' PVCs bind to them.
    await kubectl(["apply", "-f", "-"], { stdin: storageManifest(join(p.run, "volumes")) });
    await waitFor(
      "the node to be Ready",
      "kubelet",
      async () =>
        (await kubectl(["get", "node", NODE_NAME, "-o", "jsonpath={.status.conditions[?(@.type=='Ready')].status}"], {
          timeoutMs: 5000,
        })) === "True",
      120_000,
    );
    log(`one-node Kubernetes ready in ${((Date.now() - t0) / 1000).toFixed(1)} s (node ${nodeIp}, logs ${p.logs})`);
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }

  return {
    nodeIp,
    kubeconfig,
    registryHostsDir,
    binaries,
    kubectl,
    helm: (args, o = {}) =>
      runTool([binaries.path("helm"), "--kubeconfig", kubeconfig, ...args], { timeoutMs: o.timeoutMs ?? 600_000 }),
    async importImages(tags) {
      const ctr = (args: string[]) =>
        Bun.spawn(["ctr", "--address", p.socket, "-n", "k8s.io", ...args], { stdout: "pipe", stderr: "pipe" });
      const have = new Set((await new Response(ctr(["images", "ls", "-q"]).stdout).text()).split("\n"));
      const need = tags.filter((t) => !have.has(dockerRef(t)));
      if (need.length === 0) return 0;
      // One `docker save` of them all: shared layers travel once.
      const save = Bun.spawn(["docker", "save", ...need], { stdout: "pipe", stderr: "pipe" });
      const imp = Bun.spawn(["ctr", "--address", p.socket, "-n", "k8s.io", "images", "import", "-"], {
        stdin: save.stdout,
        stdout: "pipe",
        stderr: "pipe",
      });
      const [saved, imported] = await Promise.all([save.exited, imp.exited]);
      if (saved !== 0 || imported !== 0)
        throw new Error(
          `importing ${need.join(", ")} failed: ${(await new Response(save.stderr).text()) + (await new Response(imp.stderr).text())}`,
        );
      return need.length;
    },
    async tagImage(from, to) {
      const proc = Bun.spawn(
        ["ctr", "--address", p.socket, "-n", "k8s.io", "images", "tag", "--force", dockerRef(from), dockerRef(to)],
        {
          stdout: "pipe",
          stderr: "pipe",
        },
      );
      if ((await proc.exited) !== 0) throw new Error(`ctr images tag: ${await new Response(proc.stderr).text()}`);
    },
    stop,
  };
}

/** Runs a command to its end within a time limit; its stdout, or an error with the end of its stderr. */
export async function runTool(cmd: string[], o: { timeoutMs?: number; stdin?: string } = {}): Promise<string> {
  const proc = Bun.spawn(cmd, {
    env: kubeToolEnv(),
    stdin: o.stdin !== undefined ? new TextEncoder().encode(o.stdin) : "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: o.timeoutMs ?? 120_000,
    killSignal: "SIGKILL",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  const name = (cmd[0] ?? "").replace(/^.*\//, "").replace(/-v[\d.]+$/, "");
  if (code !== 0)
    throw new Error(
      `${name} ${cmd
        .slice(1)
        .filter((a) => !a.includes("kubeconfig"))
        .join(" ")} exited ${code}: ${(stderr || stdout).trim().slice(-1500)}`,
    );
  return stdout;
}

/**
 * dockerd sets the FORWARD policy to DROP: the pods' traffic is accepted by rules appended to FORWARD, so that
 * kube-proxy's (which it puts first) still reject a connection to a Service without ready endpoints. (The CNI
 * firewall plugin would put its ACCEPT before them: such a connection then left by the default route, and this
 * VM's network completes any TCP handshake, so clients kept connections to nowhere.) A packet still addressed to
 * a ClusterIP after kube-proxy's DNAT has no endpoint: refused, from pods and from the host. The chains are
 * KUBE-PSS-*: removed at the end with kube-proxy's (host-state.ts).
 */
async function allowPodTraffic(): Promise<void> {
  const rules = [
    ["-N", "KUBE-PSS-FORWARD"],
    ["-A", "KUBE-PSS-FORWARD", "-d", SERVICE_CIDR, "-j", "REJECT"],
    ["-A", "KUBE-PSS-FORWARD", "-s", CLUSTER_CIDR, "-j", "ACCEPT"],
    ["-A", "KUBE-PSS-FORWARD", "-d", CLUSTER_CIDR, "-j", "ACCEPT"],
    ["-A", "FORWARD", "-j", "KUBE-PSS-FORWARD"],
    ["-N", "KUBE-PSS-OUTPUT"],
    ["-A", "KUBE-PSS-OUTPUT", "-d", SERVICE_CIDR, "-j", "REJECT"],
    ["-A", "OUTPUT", "-j", "KUBE-PSS-OUTPUT"],
  ];
  for (const rule of rules) await runCommand(["iptables", "-w", "5", ...rule]);
}

/** docker.io/<name>:<tag>: how containerd names an image Docker calls <name>:<tag>. */
export function dockerRef(tag: string): string {
  const first = tag.split("/")[0] ?? "";
  const qualified = tag.includes("/") && (first.includes(".") || first.includes(":") || first === "localhost");
  return qualified ? tag : `docker.io/${tag.includes("/") ? tag : `library/${tag}`}`;
}

function dpkgInstalled(pkg: string): boolean {
  const proc = Bun.spawnSync(["dpkg-query", "-W", "-f=${Status}", pkg], { stderr: "ignore" });
  return proc.exitCode === 0 && proc.stdout.toString().includes("install ok installed");
}

export function cniConfig(mtu: number | null) {
  return {
    cniVersion: "1.0.0",
    name: "pss-k8s",
    plugins: [
      {
        type: "bridge",
        bridge: BRIDGE,
        isGateway: true,
        ipMasq: true,
        hairpinMode: true,
        ...(mtu ? { mtu } : {}),
        ipam: {
          type: "host-local",
          ranges: [[{ subnet: POD_CIDR }]],
          routes: [{ dst: "0.0.0.0/0" }],
          dataDir: join(clusterPaths().run, "ipam"),
        },
      },
      { type: "portmap", capabilities: { portMappings: true } },
    ],
  };
}

export function containerdToml(p: ReturnType<typeof clusterPaths>, cniConf: string, registryHostsDir: string): string {
  return `version = 2
root = "${p.containerdRoot}"
state = "${p.containerdState}"
oom_score = 0
[grpc]
  address = "${p.socket}"
[debug]
  level = "warn"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${dockerRef(PAUSE_IMAGE)}"
  # This VM lacks CAP_SYS_RESOURCE: without it every sandbox fails to start.
  restrict_oom_score_adj = true
  enable_unprivileged_ports = true
  enable_unprivileged_icmp = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${cniConf}"
  # Per registry a hosts.toml (registry.ts: the test's registry speaks plain HTTP on loopback).
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "${registryHostsDir}"
[plugins."io.containerd.internal.v1.opt"]
  path = "${join(p.containerdRoot, "opt")}"
`;
}

function kubeletYaml(p: ReturnType<typeof clusterPaths>, ca: string, nodeIp: string): string {
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
failCgroupV1: false
containerRuntimeEndpoint: unix://${p.socket}
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: false }
  x509: { clientCAFile: ${ca} }
authorization: { mode: AlwaysAllow }
clusterDNS: [${nodeIp}]
clusterDomain: cluster.local
failSwapOn: false
readOnlyPort: 0
port: 10250
healthzBindAddress: 127.0.0.1
healthzPort: 10248
serializeImagePulls: false
# Disk thresholds low: a test node on a shared disk; images are never collected (no registry to pull them again).
evictionHard: { memory.available: 100Mi, nodefs.available: 2%, imagefs.available: 2%, nodefs.inodesFree: 2% }
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
maxPods: 110
containerLogMaxSize: 5Mi
podLogsDir: ${join(p.run, "pod-logs")}
volumePluginDir: ${join(p.run, "volume-plugins")}
containerLogMaxFiles: 2
shutdownGracePeriod: 0s
`;
}

function kubeProxyYaml(kubeconfig: string, nodeIp: string): string {
  return `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: { kubeconfig: ${kubeconfig} }
mode: iptables
hostnameOverride: ${NODE_NAME}
clusterCIDR: ${CLUSTER_CIDR}
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: [${nodeIp}/32]
iptables: { localhostNodePorts: false, minSyncPeriod: 500ms, syncPeriod: 30s }
# 0: leave the host's conntrack settings as they are.
conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s }
`;
}

function corednsConfig(nodeIp: string, kubeconfig: string): string {
  return `.:53 {
    bind ${nodeIp}
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig ${kubeconfig} pss
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 5
    }
    forward . /etc/resolv.conf
    cache 5
}
`;
}

function storageManifest(dir: string): string {
  const docs = [
    `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: pss-local
  annotations: { storageclass.kubernetes.io/is-default-class: "true" }
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: Immediate
reclaimPolicy: Retain`,
  ];
  for (let i = 1; i <= 12; i++) {
    const path = join(dir, `pv${i}`);
    mkdirSync(path, { recursive: true, mode: 0o777 });
    Bun.spawnSync(["chmod", "0777", path]);
    docs.push(`apiVersion: v1
kind: PersistentVolume
metadata: { name: pss-pv${i} }
spec:
  capacity: { storage: 10Gi }
  accessModes: [ReadWriteOnce]
  storageClassName: pss-local
  persistentVolumeReclaimPolicy: Retain
  hostPath: { path: ${path}, type: Directory }`);
  }
  return docs.join("\n---\n");
}

/** The sandbox ("pause") image: no registry here, so a static Go program that sleeps, in a one-file image. */
export async function ensurePauseImage(socket: string, log: Log): Promise<void> {
  const has = Bun.spawn(["ctr", "--address", socket, "-n", "k8s.io", "images", "ls", "-q"], { stdout: "pipe" });
  if ((await new Response(has.stdout).text()).split("\n").includes(dockerRef(PAUSE_IMAGE))) return;
  const ctx = mkdtempSync(join(tmpdir(), "pss-pause-"));
  try {
    writeFileSync(join(ctx, "go.mod"), "module pause\n\ngo 1.21\n");
    writeFileSync(
      join(ctx, "main.go"),
      `package main

import (
	"os"
	"os/signal"
	"syscall"
)

// Holds the pod's namespaces; exits on SIGINT/SIGTERM; reaps orphans (it is PID 1 of a shared PID namespace).
func main() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s == syscall.SIGCHLD {
			for {
				var ws syscall.WaitStatus
				if pid, _ := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 {
					break
				}
			}
			continue
		}
		os.Exit(0)
	}
}
`,
    );
    const go = Bun.which("go") ?? "/usr/local/go/bin/go";
    await runCommand([go, "build", "-trimpath", "-ldflags", "-s -w", "-o", "pause", "."], {
      cwd: ctx,
      env: { CGO_ENABLED: "0", GOFLAGS: "" },
    });
    writeFileSync(
      join(ctx, "Dockerfile"),
      'FROM scratch\nCOPY pause /pause\nUSER 65535:65535\nENTRYPOINT ["/pause"]\n',
    );
    await runCommand(["docker", "build", "--quiet", "-t", PAUSE_IMAGE, ctx], { env: { DOCKER_BUILDKIT: "0" } });
    const save = Bun.spawn(["docker", "save", PAUSE_IMAGE], { stdout: "pipe" });
    const imp = Bun.spawn(["ctr", "--address", socket, "-n", "k8s.io", "images", "import", "-"], {
      stdin: save.stdout,
      stdout: "pipe",
      stderr: "pipe",
    });
    if ((await imp.exited) !== 0) throw new Error(`pause image import: ${await new Response(imp.stderr).text()}`);
    log(`built the pause image ${PAUSE_IMAGE}`);
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
}
