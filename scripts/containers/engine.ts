// A Docker engine for `npm run images` and `npm test`: the one that answers, or, on a Debian machine as root
// without one, Debian's docker.io installed and dockerd started here (stopped again by stop()). The compose v2
// plugin is built from the Go module proxy when missing (Debian 12 ships only compose 1.29). Nothing is downloaded
// from outside the package registries.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { aptInstall } from "../../infra/src/system-packages.ts";
import { defaultPaths } from "../../infra/src/index.ts";
import { firewallListings, out, readSysctls, restoreSysctls, splitRule } from "../kubernetes/host-state.ts";
import { ensureComposePlugin } from "./compose-plugin.ts";

export type Engine = { ok: true; startedHere: boolean; stop(): Promise<void> } | { ok: false; reason: string };

/** True when `docker info` answers within a few seconds. */
export async function engineAnswers(): Promise<boolean> {
  if (!Bun.which("docker")) return false;
  try {
    const proc = Bun.spawn({
      cmd: ["docker", "info", "--format", "{{.ServerVersion}}"],
      stdout: "ignore",
      stderr: "ignore",
      stdin: "ignore",
      timeout: 5_000,
      killSignal: "SIGKILL",
    });
    return (await proc.exited) === 0;
  } catch {
    return false;
  }
}

/** The MTU of the interface holding the default route: containers need it or their downloads stall. */
export function hostMtu(): number | null {
  try {
    const route = readFileSync("/proc/net/route", "utf8")
      .split("\n")
      .slice(1)
      .map((l) => l.trim().split(/\s+/));
    const iface = route.find((cols) => cols[1] === "00000000")?.[0];
    return iface ? Number(readFileSync(`/sys/class/net/${iface}/mtu`, "utf8").trim()) : null;
  } catch {
    return null;
  }
}

/**
 * The engine's hard limit on open files (dockerd started here inherits this process's): a container may not be
 * given more, so OpenSearch's nofile ulimit in docker-compose.yml is capped at it (PSS_OPENSEARCH_NOFILE).
 */
export function nofileLimit(): number {
  try {
    const line = readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const hard = Number(line?.trim().split(/\s+/)[4]);
    return Number.isFinite(hard) && hard > 0 ? Math.min(hard, 65536) : 65536;
  } catch {
    return 65536;
  }
}

export interface MachineFacts {
  platform: string;
  uid: number | undefined;
  cgroups: boolean;
  dockerd: boolean;
  aptGet: boolean;
}

function machineFacts(): MachineFacts {
  return {
    platform: process.platform,
    uid: process.getuid?.(),
    cgroups: existsSync("/sys/fs/cgroup") && readdirSync("/sys/fs/cgroup").length > 0,
    dockerd: existsSync("/usr/sbin/dockerd"),
    aptGet: Bun.which("apt-get") !== null,
  };
}

/** Why this machine cannot have an engine started here (one line), or null when it can. */
export function cannotStart(m: MachineFacts = machineFacts()): string | null {
  if (m.platform !== "linux") return `no Docker engine answers, and on ${m.platform} this runner does not start one`;
  if (m.uid !== 0)
    return "no Docker engine answers, and starting one needs root (run as root, or start Docker yourself)";
  if (!m.cgroups) return "no Docker engine answers, and this machine has no cgroups to run one";
  if (!m.dockerd && !m.aptGet)
    return "no Docker engine answers, and this machine has no apt-get to install Debian's docker.io";
  return null;
}

/**
 * An answering engine, started here if need be. `composePlugin` is the compose v2 plugin being made ready (built
 * from the Go module proxy when missing): its build is CPU-bound, so callers overlap it with the image builds and
 * await it only before they call `docker compose`.
 */
export async function ensureEngine(opts: {
  install: boolean;
  log?: (line: string) => void;
}): Promise<Engine & { composePlugin?: Promise<void> }> {
  const log = opts.log ?? ((line: string) => console.error(`containers: ${line}`));
  const plugin = () => {
    const ready = ensureComposePlugin({ build: opts.install, log }).catch((err: Error) => {
      throw new Error(`the compose v2 plugin is missing: ${err.message.split("\n")[0]}`);
    });
    ready.catch(() => {}); // awaited by the caller; never an unhandled rejection meanwhile
    return ready;
  };
  if (await engineAnswers()) return { ok: true, startedHere: false, stop: async () => {}, composePlugin: plugin() };
  if (!opts.install) return { ok: false, reason: "no Docker engine answers" };
  const why = cannotStart();
  if (why) return { ok: false, reason: why };
  try {
    if (!existsSync("/usr/sbin/dockerd") || !Bun.which("docker")) await aptInstall(["docker.io"]);
    const composePlugin = plugin();
    return { ...(await startDockerd(log)), composePlugin };
  } catch (err) {
    return { ok: false, reason: `could not start a Docker engine: ${(err as Error).message.split("\n")[0]}` };
  }
}

async function startDockerd(log: (line: string) => void): Promise<Engine> {
  const logDir = join(defaultPaths().dataDir, "logs");
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, "dockerd.log");
  const fd = openSync(logFile, "a");
  const mtu = hostMtu();
  // What dockerd adds to the host and leaves after it exits (its bridge, its iptables rules, chains and FORWARD
  // policy, ip_forward): taken away again by stop(), so the host is as it was found.
  const before = {
    firewall: await firewallRules(),
    bridge: existsSync("/sys/class/net/docker0"),
    sysctls: readSysctls(),
  };
  const proc = Bun.spawn(["/usr/sbin/dockerd", ...(mtu ? ["--mtu", String(mtu)] : [])], {
    stdin: "ignore",
    stdout: fd,
    stderr: fd,
    detached: true,
  });
  closeSync(fd);
  proc.unref();
  const deadline = Date.now() + 30_000;
  while (!(await engineAnswers())) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      const tail = readFileSync(logFile, "utf8").trim().split("\n").slice(-1)[0] ?? "";
      throw new Error(
        `dockerd did not answer (${proc.exitCode !== null ? `exited ${proc.exitCode}` : "30 s"}): ${tail}`,
      );
    }
    await Bun.sleep(250);
  }
  log(`started dockerd (pid ${proc.pid}, MTU ${mtu ?? "default"}; log ${logFile})`);
  return {
    ok: true,
    startedHere: true,
    async stop() {
      proc.kill("SIGTERM");
      const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(20_000).then(() => false)]);
      if (!exited) proc.kill("SIGKILL");
      const removed = await removeAddedRules(before.firewall);
      const bridge = !before.bridge && existsSync("/sys/class/net/docker0");
      if (bridge) await out(["ip", "link", "delete", "docker0"]);
      const sysctls = restoreSysctls(before.sysctls);
      log(
        `stopped dockerd; removed ${removed} iptables rules, chains and policies it left${bridge ? ", its bridge docker0" : ""}${sysctls.length ? `; restored ${sysctls.join(", ")}` : ""}`,
      );
    },
  };
}

const FIREWALL_TABLES = ["filter", "nat"];

/** `iptables -S` of the tables dockerd writes, both families: "<bin> <table>" to its lines. */
async function firewallRules(): Promise<Map<string, string[]>> {
  const listings = await firewallListings(FIREWALL_TABLES);
  return new Map(listings.map(({ bin, table, text }) => [`${bin} ${table}`, text.split("\n").filter(Boolean)]));
}

/** Deletes the rules, then the chains, that were not there before, and sets changed policies back; returns how many. */
async function removeAddedRules(before: Map<string, string[]>): Promise<number> {
  let removed = 0;
  for (const [key, lines] of await firewallRules()) {
    const had = new Set(before.get(key) ?? []);
    const [bin, table] = key.split(" ") as [string, string];
    const added = lines.filter((l) => !had.has(l));
    const chains = added.flatMap((l) => /^-N (\S+)$/.exec(l)?.[1] ?? []);
    const commands = [
      ...added
        .filter((l) => l.startsWith("-A "))
        .reverse()
        .map((l) => ["-D", ...splitRule(l.slice(3))]),
      ...chains.map((c) => ["-F", c]),
      ...chains.map((c) => ["-X", c]),
      // A built-in chain's policy (dockerd sets FORWARD to DROP): back to what it was.
      ...[...had].flatMap((l) => {
        const [, chain, policy] = /^-P (\S+) (\S+)$/.exec(l) ?? [];
        return chain && policy && !lines.includes(l) ? [["-P", chain, policy]] : [];
      }),
    ];
    for (const args of commands)
      if ((await out([bin, "-w", "5", "-t", table, ...args])).code === 0 && args[0] !== "-F") removed++;
  }
  return removed;
}
