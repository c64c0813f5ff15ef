import { chmodSync, chownSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Component, InfraPaths } from "./component.ts";
import { isPortOpen, readPid, removeFile, runCommand, startDetached, stopPid } from "./process.ts";
import { postgresBinDir } from "./system-packages.ts";

export const POSTGRES_PORT = 55432;
const USER = "pss";
const PASSWORD = "pss";
const DATABASE = "pss";

/** PostgreSQL refuses to run as root: when we are root, its files belong to and it runs as 'postgres'. */
function asServerUser(cmd: string[]): string[] {
  return process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--", ...cmd] : cmd;
}

function chownToServerUser(path: string): void {
  if (process.getuid?.() !== 0) return;
  const ids = Bun.spawnSync(["id", "-u", "postgres"]).stdout.toString().trim();
  const gid = Bun.spawnSync(["id", "-g", "postgres"]).stdout.toString().trim();
  chownSync(path, Number(ids), Number(gid));
}

export function postgresComponent(paths: InfraPaths): Component {
  const dir = join(paths.dataDir, "postgres");
  const pgdata = join(dir, "pgdata");
  const socketDir = join(dir, "run");
  const logFile = join(paths.dataDir, "logs", "postgres.log");
  const pidFile = join(dir, "server.pid");

  return {
    name: "postgres",
    env: { name: "DATABASE_URL", value: `postgres://${USER}:${PASSWORD}@127.0.0.1:${POSTGRES_PORT}/${DATABASE}` },
    logFile,
    readyTimeoutMs: 60_000,
    async running() {
      return readPid(pidFile) !== null;
    },
    async start() {
      const bin = await postgresBinDir();
      if (await isPortOpen(POSTGRES_PORT)) {
        throw new Error(
          `port ${POSTGRES_PORT} is in use by a process this runner did not start; stop it or set DATABASE_URL`,
        );
      }
      mkdirSync(socketDir, { recursive: true });
      mkdirSync(join(paths.dataDir, "logs"), { recursive: true });
      for (const p of [dir, socketDir]) chownToServerUser(p);
      if (!existsSync(join(pgdata, "PG_VERSION"))) {
        const pwfile = join(dir, "pwfile");
        writeFileSync(pwfile, PASSWORD);
        chownToServerUser(pwfile);
        chmodSync(pwfile, 0o600);
        await runCommand(
          asServerUser([
            `${bin}/initdb`,
            "-D",
            pgdata,
            "-U",
            USER,
            `--pwfile=${pwfile}`,
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
          ]),
        );
        removeFile(pwfile);
      }
      // The log file is written by the server user, so let it own the file.
      writeFileSync(logFile, "", { flag: "a" });
      chownToServerUser(logFile);
      const settings = [
        ["listen_addresses", "127.0.0.1"],
        ["port", String(POSTGRES_PORT)],
        ["unix_socket_directories", socketDir],
        ["max_connections", "300"],
        ["shared_buffers", "1GB"],
        ["effective_cache_size", "4GB"],
        ["work_mem", "16MB"],
        ["maintenance_work_mem", "256MB"],
        ["wal_buffers", "16MB"],
        ["max_wal_size", "4GB"],
        ["checkpoint_completion_target", "0.9"],
      ].flatMap(([k, v]) => ["-c", `${k}=${v}`]);
      const [cmd, ...args] = asServerUser([`${bin}/postgres`, "-D", pgdata, ...settings]);
      startDetached({ cmd: cmd!, args, cwd: dir, logFile, pidFile });
    },
    async ready() {
      const bin = await postgresBinDir();
      const check = Bun.spawnSync([`${bin}/pg_isready`, "-h", "127.0.0.1", "-p", String(POSTGRES_PORT), "-q"]);
      if (check.exitCode !== 0) return false;
      // The application database is created once, after the server first answers.
      const exists = Bun.spawnSync(
        asServerUser([
          `${bin}/psql`,
          "-h",
          socketDir,
          "-p",
          String(POSTGRES_PORT),
          "-U",
          USER,
          "-d",
          "postgres",
          "-tAc",
          `SELECT 1 FROM pg_database WHERE datname='${DATABASE}'`,
        ]),
      );
      if (exists.exitCode !== 0) return false;
      if (exists.stdout.toString().trim() !== "1") {
        await runCommand(
          asServerUser([`${bin}/createdb`, "-h", socketDir, "-p", String(POSTGRES_PORT), "-U", USER, DATABASE]),
        );
      }
      return true;
    },
    async stop() {
      // Signal the postmaster itself, not the runuser wrapper in pidFile: runuser answers SIGTERM by SIGKILLing its
      // child after 2 s, which leaves orphaned backends still serving their open connections. SIGINT is PostgreSQL's
      // fast shutdown: every session is ended and the server exits cleanly, like a real outage would end them.
      const postmaster = readPid(join(pgdata, "postmaster.pid"));
      if (postmaster) await stopPid(postmaster, { signal: "SIGINT" });
      const wrapper = readPid(pidFile);
      if (wrapper) await stopPid(wrapper);
      removeFile(pidFile);
    },
  };
}
