// Leaving the host as found: what the one-node cluster changes outside its data directory, put back at the end (and
// at the start, after a run that was killed): the iptables chains kube-proxy and the CNI plugins add (KUBE-*, CNI-*)
// and the rules jumping to them, the CNI bridge, the network namespaces and mounts the runtime and the kubelet make,
// the pods' cgroups, the sysctls the kubelet sets, and any process still running from the cluster.
import { existsSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const BRIDGE = "pssk8s0";
/** Sysctls the kubelet (setupKernelTunables), the bridge plugin or kube-proxy may change. */
export const SYSCTLS = [
  "vm/overcommit_memory",
  "vm/panic_on_oom",
  "kernel/panic",
  "kernel/panic_on_oops",
  "kernel/keys/root_maxkeys",
  "kernel/keys/root_maxbytes",
  "net/ipv4/ip_forward",
  "net/ipv4/conf/all/route_localnet",
  "net/bridge/bridge-nf-call-iptables",
  "net/bridge/bridge-nf-call-ip6tables",
  "net/netfilter/nf_conntrack_max",
] as const;

const OURS = /^(KUBE-|CNI-)/;

/**
 * Host directories the kubelet, containerd's CRI plugin and the CNI plugins may create whatever they are told
 * (pod log links, the CNI result cache, network namespaces, default plugin directories): removed at the end when
 * they were not there at the start.
 */
export const HOST_DIRS = [
  "/var/log/pods",
  "/var/log/containers",
  "/var/lib/cni",
  "/var/lib/kubelet",
  "/var/run/kubernetes",
  "/usr/libexec/kubernetes",
  "/var/run/netns",
] as const;

export function existingHostDirs(): string[] {
  return HOST_DIRS.filter((d) => existsSync(d));
}

/** Removes the HOST_DIRS that did not exist before (`before`: existingHostDirs() then); the ones it removed. */
export function removeNewHostDirs(before: string[]): string[] {
  const removed: string[] = [];
  for (const d of HOST_DIRS)
    if (!before.includes(d) && existsSync(d) && mountsUnder([d]).length === 0) {
      rmSync(d, { recursive: true, force: true });
      removed.push(d);
    }
  return removed;
}

/** Runs a command; its exit code and its output (stderr when it failed). */
export async function out(cmd: string[]): Promise<{ code: number; text: string }> {
  const proc = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [text, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, text: code === 0 ? text : err };
}

export function readSysctls(): Record<string, string> {
  const values: Record<string, string> = {};
  for (const key of SYSCTLS) {
    const file = `/proc/sys/${key}`;
    if (existsSync(file)) values[key] = readFileSync(file, "utf8").trim();
  }
  return values;
}

/** Writes back every sysctl that differs from `before`; the names of those it changed. */
export function restoreSysctls(before: Record<string, string>): string[] {
  const changed: string[] = [];
  for (const [key, value] of Object.entries(before)) {
    const file = `/proc/sys/${key}`;
    try {
      if (readFileSync(file, "utf8").trim() !== value) {
        writeFileSync(file, value);
        changed.push(key);
      }
    } catch {
      // not writable here: nothing we could have changed either
    }
  }
  return changed;
}

/**
 * The iptables commands that remove our chains from one table's `iptables -S` listing: first every rule of a
 * chain that is not ours jumping to one of ours, then every one of our chains flushed, then deleted.
 */
export function chainRemovals(listing: string): string[][] {
  const lines = listing.split("\n").map((l) => l.trim());
  const ours = lines.flatMap((l) => {
    const chain = /^-N (\S+)$/.exec(l)?.[1];
    return chain && OURS.test(chain) ? [chain] : [];
  });
  if (ours.length === 0) return [];
  const jumps = lines.flatMap((l) => {
    const [, chain, rule] = /^-A (\S+) (.*)$/.exec(l) ?? [];
    if (!chain || rule === undefined || OURS.test(chain)) return [];
    const target = /(?:^| )-[jg] (\S+)/.exec(rule)?.[1];
    return target && OURS.test(target) ? [["-D", chain, ...splitRule(rule)]] : [];
  });
  return [...jumps, ...ours.map((c) => ["-F", c]), ...ours.map((c) => ["-X", c])];
}

/** Splits an `iptables -S` rule into arguments (quoted comments stay one argument). */
export function splitRule(rule: string): string[] {
  const args: string[] = [];
  for (const m of rule.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g))
    args.push(m[1] !== undefined ? m[1].replace(/\\"/g, '"') : (m[2] ?? ""));
  return args;
}

/** `iptables -S` of each of these tables, for iptables and ip6tables where installed (tables it cannot list left out). */
export async function firewallListings(tables: string[]): Promise<{ bin: string; table: string; text: string }[]> {
  const listings: { bin: string; table: string; text: string }[] = [];
  for (const bin of ["iptables", "ip6tables"]) {
    if (!Bun.which(bin)) continue;
    for (const table of tables) {
      const listing = await out([bin, "-w", "5", "-t", table, "-S"]);
      if (listing.code === 0) listings.push({ bin, table, text: listing.text });
    }
  }
  return listings;
}

/** Removes our chains from every table of iptables and ip6tables; the chains it removed. */
export async function removeChains(): Promise<string[]> {
  const removed: string[] = [];
  for (const { bin, table, text } of await firewallListings(["filter", "nat", "mangle", "raw"]))
    for (const args of chainRemovals(text)) {
      await out([bin, "-w", "5", "-t", table, ...args]);
      if (args[0] === "-X") removed.push(`${bin} ${table} ${args[1]}`);
    }
  return removed;
}

/** `iptables-save` of both families without counters and comments: what the host had, to compare. */
export async function firewallSnapshot(): Promise<string> {
  const parts: string[] = [];
  for (const bin of ["iptables-save", "ip6tables-save"]) {
    if (!Bun.which(bin)) continue;
    const r = await out([bin]);
    parts.push(
      `@@ ${bin}\n${r.text}`
        .split("\n")
        .filter((l) => l && !l.startsWith("#"))
        .map((l) => l.replace(/\[\d+:\d+\]/g, ""))
        .join("\n"),
    );
  }
  return parts.join("\n");
}

/** The tables of each family in a firewallSnapshot(), with whether each has a rule or a policy other than ACCEPT. */
export function snapshotTables(snapshot: string): Map<string, boolean> {
  const tables = new Map<string, boolean>();
  let family = "";
  let table = "";
  for (const line of snapshot.split("\n")) {
    if (line.startsWith("@@ ")) family = line.startsWith("@@ ip6") ? "ip6" : "ip";
    else if (line.startsWith("*")) tables.set((table = `${family} ${line.slice(1)}`), false);
    else if (table && (line.startsWith("-A ") || /^:\S+ (DROP|REJECT)/.test(line))) tables.set(table, true);
  }
  return tables;
}

/**
 * Tables the first iptables call of the cluster created (iptables-nft makes a table when a tool lists it): deleted
 * with nft when they are still empty. Without nft they stay, empty; the names of those deleted or left.
 */
export async function removeNewEmptyTables(before: string): Promise<{ deleted: string[]; left: string[] }> {
  const had = snapshotTables(before);
  const now = snapshotTables(await firewallSnapshot());
  const fresh = [...now].filter(([name, used]) => !had.has(name) && !used).map(([name]) => name);
  const deleted: string[] = [];
  if (Bun.which("nft"))
    for (const name of fresh)
      if ((await out(["nft", "delete", "table", ...name.split(" ")])).code === 0) deleted.push(name);
  return { deleted, left: fresh.filter((t) => !deleted.includes(t)) };
}

/** Mount points at or under any of `prefixes`, deepest first (as /proc/self/mountinfo lists them). */
export function mountsUnder(prefixes: string[], mountinfo = readFileSync("/proc/self/mountinfo", "utf8")): string[] {
  const points = mountinfo
    .split("\n")
    .map((l) => l.split(" ")[4])
    .filter((p): p is string => !!p)
    .map((p) => p.replace(/\\040/g, " "))
    .filter((p) => prefixes.some((prefix) => p === prefix || p.startsWith(`${prefix}/`)));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

export async function unmountUnder(prefixes: string[]): Promise<number> {
  let count = 0;
  for (let round = 0; round < 3; round++) {
    const points = mountsUnder(prefixes);
    if (points.length === 0) break;
    for (const p of points) if ((await out(["umount", "-l", p])).code === 0) count++;
  }
  return count;
}

/** Network namespaces the CRI runtime made for pods (/var/run/netns/cni-*): unmounted and removed. */
export async function removePodNetns(): Promise<number> {
  const dir = "/var/run/netns";
  if (!existsSync(dir)) return 0;
  let count = 0;
  for (const name of readdirSync(dir).filter((n) => n.startsWith("cni-"))) {
    await out(["umount", join(dir, name)]);
    rmSync(join(dir, name), { force: true });
    count++;
  }
  return count;
}

/** The pods' cgroups (kubepods under every v1 hierarchy, or the v2 root): their processes killed, then removed. */
export function removePodCgroups(): number {
  const roots: string[] = [];
  const base = "/sys/fs/cgroup";
  if (!existsSync(base)) return 0;
  if (existsSync(join(base, "kubepods"))) roots.push(join(base, "kubepods"));
  for (const ctrl of readdirSync(base)) {
    const dir = join(base, ctrl, "kubepods");
    if (existsSync(dir)) roots.push(dir);
  }
  const dirs: string[] = [];
  const walk = (d: string) => {
    dirs.push(d);
    for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(join(d, e.name));
  };
  for (const r of roots) walk(r);
  for (const d of dirs)
    try {
      for (const pid of readFileSync(join(d, "cgroup.procs"), "utf8").split("\n").filter(Boolean))
        try {
          process.kill(Number(pid), "SIGKILL");
        } catch {}
    } catch {}
  let removed = 0;
  for (const d of dirs.sort((a, b) => b.length - a.length))
    for (let i = 0; i < 20; i++) {
      try {
        rmdirSync(d);
        removed++;
        break;
      } catch {
        Bun.sleepSync(50); // its processes are still exiting
      }
    }
  return removed;
}

/** Processes whose command line contains `marker` (the cluster's private paths), killed. */
export async function killProcessesWith(marker: string): Promise<number> {
  let count = 0;
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    if (Number(pid) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmdline.includes(marker)) {
        process.kill(Number(pid), "SIGKILL");
        count++;
      }
    } catch {}
  }
  return count;
}

export async function removeBridge(): Promise<boolean> {
  if (!existsSync(`/sys/class/net/${BRIDGE}`)) return false;
  return (await out(["ip", "link", "delete", BRIDGE])).code === 0;
}
