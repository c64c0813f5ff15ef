// CPU pinning for the benchmarks that show two services apart (marketplace-search): on one host every process
// shares every core, so a saturating load on one service takes CPU from all the others, which says more about
// the host than about the services. Pinning each side (its service process, its servers, its load generator) to
// cores of its own is the nearest this host comes to the deployment the separation is for: each service in its
// own container with its own CPU limit, on nodes of their own. `taskset` (util-linux) sets the affinity; a
// process's threads and the children it forks later (PostgreSQL's backends) inherit it.
import { availableParallelism } from "node:os";

/** Every CPU of the host, as taskset spells a list ("0-1"). */
export const ALL_CPUS = `0-${availableParallelism() - 1}`;

/** `command` prefixed so that it runs on `cpus` only; unchanged without `cpus`. */
export function pinned(cpus: string | undefined, command: string[]): string[] {
  return cpus ? ["taskset", "-c", cpus, ...command] : command;
}

/** The PIDs of running processes whose command line matches `pattern` (pgrep -f). */
export function pidsMatching(pattern: string): number[] {
  const out = Bun.spawnSync(["pgrep", "-f", pattern], { stdout: "pipe", stderr: "ignore" });
  return new TextDecoder()
    .decode(out.stdout)
    .split("\n")
    .filter(Boolean)
    .map(Number)
    .filter((pid) => pid !== process.pid);
}

/** Sets the affinity of every thread of each process to `cpus`; returns the PIDs it could pin. */
export function pin(cpus: string, pids: number[]): number[] {
  return pids.filter(
    (pid) =>
      Bun.spawnSync(["taskset", "-a", "-p", "-c", cpus, String(pid)], { stdout: "ignore", stderr: "ignore" }).success,
  );
}
