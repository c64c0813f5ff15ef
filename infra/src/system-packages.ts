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

/** openssl, which makes the secured profile's certificates (infra/src/secured/certificates.ts). */
export async function ensureOpenssl(): Promise<void> {
  if (Bun.which("openssl")) return;
  await aptInstall(["openssl"]);
}

export async function redisServerBinary(): Promise<string> {
  if (existsSync("/usr/bin/redis-server")) return "/usr/bin/redis-server";
  await aptInstall(["redis-server"]);
  return "/usr/bin/redis-server";
}

/**
 * Tools only some tests need, from Debian's packages like the servers (not servers the stack runs), and the binary
 * each installs: PgBouncer for the tests behind a transaction-pooling pooler (test/pgbouncer/), HAProxy for the
 * load-balancer tests, which run the compose balancer's configuration (images/balancer/) on this host.
 */
export const TEST_TOOLS = {
  pgbouncer: "/usr/sbin/pgbouncer",
  haproxy: "/usr/sbin/haproxy",
} as const;
export type TestTool = keyof typeof TEST_TOOLS;

/** The tool's binary, installed when missing and `install` (as root); null otherwise, and its tests skip. */
export async function testToolBinary(tool: TestTool, opts: { install: boolean }): Promise<string | null> {
  const path = TEST_TOOLS[tool];
  if (existsSync(path)) return path;
  if (!opts.install || process.getuid?.() !== 0) return null;
  await aptInstall([tool]);
  return existsSync(path) ? path : null;
}
