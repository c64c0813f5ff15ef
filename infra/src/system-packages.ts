// PostgreSQL and Redis come from Debian's packages; install them when missing (CI runs as root).
import { existsSync, readdirSync } from "node:fs";
import { runCommand } from "./process.ts";

let aptUpdated = false;

export async function aptInstall(packages: string[]): Promise<void> {
  if (process.getuid?.() !== 0) {
    throw new Error(
      `missing ${packages.join(", ")}: install them with 'sudo apt-get install -y ${packages.join(" ")}' (not root, cannot install)`,
    );
  }
  const env = { DEBIAN_FRONTEND: "noninteractive" };
  if (!aptUpdated) {
    await runCommand(["apt-get", "update", "-qq"], { env });
    aptUpdated = true;
  }
  console.error(`infra: installing ${packages.join(", ")} from Debian's packages`);
  await runCommand(["apt-get", "install", "-y", "-qq", "--no-install-recommends", ...packages], { env });
}

/** Directory holding initdb/postgres/pg_isready of the newest installed PostgreSQL. */
export async function postgresBinDir(): Promise<string> {
  const find = () => {
    const base = "/usr/lib/postgresql";
    if (!existsSync(base)) return null;
    const versions = readdirSync(base)
      .filter((v) => existsSync(`${base}/${v}/bin/postgres`))
      .sort((a, b) => Number(b) - Number(a));
    return versions[0] ? `${base}/${versions[0]}/bin` : null;
  };
  const found = find();
  if (found) return found;
  await aptInstall(["postgresql"]);
  const after = find();
  if (!after) throw new Error("postgresql installed but no server binary found under /usr/lib/postgresql");
  return after;
}

export async function redisServerBinary(): Promise<string> {
  if (existsSync("/usr/bin/redis-server")) return "/usr/bin/redis-server";
  await aptInstall(["redis-server"]);
  return "/usr/bin/redis-server";
}

/**
 * PgBouncer (Debian's package), for the tests that run the services behind a transaction-pooling pooler. Not
 * a server the stack needs: null when it is missing and cannot be installed (not root), and those tests skip.
 */
export async function pgbouncerBinary(opts: { install: boolean }): Promise<string | null> {
  const path = "/usr/sbin/pgbouncer";
  if (existsSync(path)) return path;
  if (!opts.install || process.getuid?.() !== 0) return null;
  await aptInstall(["pgbouncer"]);
  return existsSync(path) ? path : null;
}

/**
 * HAProxy (Debian's package), for the load-balancer tests, which run the compose balancer's configuration
 * (images/balancer/) on this host in front of real API processes. Null when missing and not installable.
 */
export async function haproxyBinary(opts: { install: boolean }): Promise<string | null> {
  const path = "/usr/sbin/haproxy";
  if (existsSync(path)) return path;
  if (!opts.install || process.getuid?.() !== 0) return null;
  await aptInstall(["haproxy"]);
  return existsSync(path) ? path : null;
}
