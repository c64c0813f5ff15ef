import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
  copyFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import type { Component, InfraPaths } from "./component.ts";
import { type SecuredProfile, SECURED_USERS } from "./secured/profile.ts";
import { isPortOpen, readPid, removeFile, runCommand, startDetached, stopPid } from "./process.ts";
import { postgresBinDir } from "./system-packages.ts";

export const POSTGRES_PORT = 55432;
const USER = "pss";
const PASSWORD = "pss";
const DATABASE = "pss";

/**
 * Where the clusters of checkouts run by root live: in the home of the `postgres` user (Debian's package makes it
 * /var/lib/postgresql), one directory per checkout. PostgreSQL refuses to run as root, so under root it runs as
 * `postgres`, which cannot enter a checkout under a 0700 directory (root's home, any Debian user's home).
 */
export const SERVER_USER_HOME = "/var/lib/postgresql/partner-syndication-service";

const isRoot = () => process.getuid?.() === 0;

/** PostgreSQL refuses to run as root: when we are root, its files belong to and it runs as 'postgres'. */
function asServerUser(cmd: string[]): string[] {
  return isRoot() ? ["runuser", "-u", "postgres", "--", ...cmd] : cmd;
}

function chownToServerUser(path: string): void {
  if (!isRoot()) return;
  const ids = Bun.spawnSync(["id", "-u", "postgres"]).stdout.toString().trim();
  const gid = Bun.spawnSync(["id", "-g", "postgres"]).stdout.toString().trim();
  chownSync(path, Number(ids), Number(gid));
}

/** The directory of one checkout's cluster under SERVER_USER_HOME: named after the checkout, unique by its real path. */
export function serverDirOf(root: string, home = SERVER_USER_HOME): string {
  const real = existsSync(root) ? realpathSync(root) : root;
  const hash = new Bun.CryptoHasher("sha256").update(real).digest("hex").slice(0, 16);
  const name = basename(real)
    .replace(/[^A-Za-z0-9._-]/g, "_")
    .slice(0, 40);
  return join(home, `${name}-${hash}`);
}

/**
 * The PostgreSQL server's files: where the server user can reach them whatever the checkout's permissions.
 * - `local`: the checkout's own directory (pid file; and the record of where the cluster is); only we read it.
 * - `server`: the data directory, socket directory and password file, read and written by the server user.
 * Run as another user than root, the server is that user, so both are the checkout's `.data/postgres`. Under root
 * the server is `postgres`, so its files go to SERVER_USER_HOME; a cluster that an earlier version initialised
 * inside the checkout (which `postgres` could reach then) stays where it is.
 */
export function postgresDirs(
  paths: InfraPaths,
  asRoot = isRoot(),
  secured?: SecuredProfile,
): { local: string; server: string; record: string } {
  const local = join(secured?.dir ?? paths.dataDir, "postgres");
  const record = join(local, "server-dir");
  if (!asRoot || existsSync(join(local, "pgdata", "PG_VERSION"))) return { local, server: local, record };
  // A secured profile's cluster is its own: keyed by the profile's directory, not the checkout's.
  return { local, server: serverDirOf(secured?.dir ?? paths.root, paths.serverUserHome ?? SERVER_USER_HOME), record };
}

/** Where a checkout's or profile's cluster files are, as recorded: what to remove with it. */
export function recordedServerDir(localDir: string): string | null {
  const record = join(localDir, "postgres", "server-dir");
  return existsSync(record) ? readFileSync(record, "utf8").trim() || null : null;
}

/** Creates `path` and any missing parent, each enterable by every user (whatever the umask), as /var/lib is. */
function enterableDirectory(path: string): void {
  if (existsSync(path)) return;
  enterableDirectory(dirname(path));
  mkdirSync(path);
  chmodSync(path, 0o755);
}

/**
 * Prepares a cluster directory outside the checkout. The checkout records it (`record`); a cluster there without
 * that record was left by an earlier copy of this checkout whose `.data` was deleted since: deleting `.data` resets
 * the database, as it does when the cluster lives inside it, so that cluster is removed (never one that runs: the
 * port check comes first).
 */
function prepareServerDir(server: string, record: string): void {
  const recorded = existsSync(record) ? readFileSync(record, "utf8").trim() : null;
  if (recorded !== server && existsSync(server)) rmSync(server, { recursive: true, force: true });
  mkdirSync(server, { recursive: true });
  chmodSync(server, 0o700);
  writeFileSync(record, `${server}\n`);
}

/**
 * PostgreSQL on loopback: the default profile's (port 55432, the well-known local password, plaintext), or with a
 * secured profile its own server (its port and generated password, TLS only: every TCP connection without TLS is
 * rejected, clients verify the certificate and host name, sslmode=verify-full).
 */
export function postgresComponent(paths: InfraPaths, secured?: SecuredProfile): Component {
  const { local: dir, server, record } = postgresDirs(paths, isRoot(), secured);
  const base = secured?.dir ?? paths.dataDir;
  const pgdata = join(server, "pgdata");
  const socketDir = join(server, "run");
  const tlsDir = join(server, "tls");
  const logFile = join(base, "logs", "postgres.log");
  const pidFile = join(dir, "server.pid");
  const port = secured?.ports.postgres ?? POSTGRES_PORT;
  const password = secured?.secrets.postgres ?? PASSWORD;
  const user = secured ? SECURED_USERS.postgres : USER;

  return {
    name: "postgres",
    env: {
      name: "DATABASE_URL",
      value: secured
        ? `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/${DATABASE}?sslmode=verify-full`
        : `postgres://${USER}:${PASSWORD}@127.0.0.1:${POSTGRES_PORT}/${DATABASE}`,
    },
    ...(secured ? { companions: { DATABASE_TLS_CA_FILE: secured.certs.caFile } } : {}),
    logFile,
    readyTimeoutMs: 60_000,
    async running() {
      return readPid(pidFile) !== null;
    },
    async start() {
      const bin = await postgresBinDir();
      if (await isPortOpen(port)) {
        throw new Error(`port ${port} is in use by a process this runner did not start; stop it or set DATABASE_URL`);
      }
      mkdirSync(dir, { recursive: true });
      if (server !== dir) {
        enterableDirectory(dirname(server));
        prepareServerDir(server, record);
      }
      mkdirSync(socketDir, { recursive: true });
      mkdirSync(join(base, "logs"), { recursive: true });
      for (const p of [server, socketDir]) chownToServerUser(p);
      if (!existsSync(join(pgdata, "PG_VERSION"))) {
        const pwfile = join(server, "pwfile");
        writeFileSync(pwfile, password);
        chownToServerUser(pwfile);
        chmodSync(pwfile, 0o600);
        await runCommand(
          asServerUser([
            `${bin}/initdb`,
            "-D",
            pgdata,
            "-U",
            user,
            `--pwfile=${pwfile}`,
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
          ]),
          // The server user's own directory: initdb returns to its working directory, which must be enterable.
          { cwd: server },
        );
        removeFile(pwfile);
        // Secured: TLS or nothing over TCP (the socket in socketDir stays for the runner's own checks).
        if (secured) {
          writeFileSync(
            join(pgdata, "pg_hba.conf"),
            [
              "local all all trust",
              "hostssl all all 127.0.0.1/32 scram-sha-256",
              "host all all 0.0.0.0/0 reject",
              "",
            ].join("\n"),
          );
          chownToServerUser(join(pgdata, "pg_hba.conf"));
        }
      }
      // The server reads its key as its own user, and only a key nobody else can read.
      if (secured) {
        mkdirSync(tlsDir, { recursive: true });
        copyFileSync(secured.certs.serverCertFile, join(tlsDir, "server.pem"));
        copyFileSync(secured.certs.serverKeyFile, join(tlsDir, "server.key"));
        chmodSync(join(tlsDir, "server.key"), 0o600);
        for (const f of [tlsDir, join(tlsDir, "server.pem"), join(tlsDir, "server.key")]) chownToServerUser(f);
      }
      // The log file is written by the server user, so let it own the file.
      writeFileSync(logFile, "", { flag: "a" });
      chownToServerUser(logFile);
      const settings = [
        ["listen_addresses", "127.0.0.1"],
        ["port", String(port)],
        ["unix_socket_directories", socketDir],
        ["max_connections", "300"],
        // The secured profile is for correctness runs, beside the default one: a small cache.
        ["shared_buffers", secured ? "128MB" : "1GB"],
        ...(secured
          ? [
              ["ssl", "on"],
              ["ssl_cert_file", join(tlsDir, "server.pem")],
              ["ssl_key_file", join(tlsDir, "server.key")],
            ]
          : []),
        ["effective_cache_size", "4GB"],
        ["work_mem", "16MB"],
        ["maintenance_work_mem", "256MB"],
        ["wal_buffers", "16MB"],
        ["max_wal_size", "4GB"],
        ["checkpoint_completion_target", "0.9"],
      ].flatMap(([k, v]) => ["-c", `${k}=${v}`]);
      const [cmd, ...args] = asServerUser([`${bin}/postgres`, "-D", pgdata, ...settings]);
      startDetached({ cmd: cmd!, args, cwd: server, logFile, pidFile });
    },
    async ready() {
      const bin = await postgresBinDir();
      const check = Bun.spawnSync([`${bin}/pg_isready`, "-h", "127.0.0.1", "-p", String(port), "-q"]);
      if (check.exitCode !== 0) return false;
      // The application database is created once, after the server first answers.
      const exists = Bun.spawnSync(
        asServerUser([
          `${bin}/psql`,
          "-h",
          socketDir,
          "-p",
          String(port),
          "-U",
          user,
          "-d",
          "postgres",
          "-tAc",
          `SELECT 1 FROM pg_database WHERE datname='${DATABASE}'`,
        ]),
        { cwd: server },
      );
      if (exists.exitCode !== 0) return false;
      if (exists.stdout.toString().trim() !== "1") {
        await runCommand(asServerUser([`${bin}/createdb`, "-h", socketDir, "-p", String(port), "-U", user, DATABASE]), {
          cwd: server,
        });
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
