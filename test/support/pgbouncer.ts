// A private PgBouncer (Debian's package) in transaction pooling, as a real process on a free loopback port, in
// front of the test database. `npm test` installs the package when it can (scripts/test.ts); without it the
// tests that need it skip and say why.
import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./ports.ts";
import { TEST_TOOLS } from "../../infra/src/index.ts";

export const PGBOUNCER = TEST_TOOLS.pgbouncer;

/** Why the PgBouncer tests cannot run here, or null when they can. */
export function pgbouncerMissing(): string | null {
  return existsSync(PGBOUNCER)
    ? null
    : `${PGBOUNCER} is not installed (npm test installs Debian's pgbouncer package when it runs as root)`;
}

export interface PgBouncer {
  /** DATABASE_URL through the pooler (same user, password and database). */
  url: string;
  port: number;
  /** What the pooler wrote (its log), for a failing test's message. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts PgBouncer with pool_mode = transaction and a small server pool in front of `databaseUrl`'s server:
 * consecutive transactions of one client connection run on whichever server connection is free.
 */
export async function startPgBouncer(databaseUrl: string, opts: { poolSize?: number } = {}): Promise<PgBouncer> {
  const target = new URL(databaseUrl);
  const database = decodeURIComponent(target.pathname.slice(1));
  const user = decodeURIComponent(target.username);
  const password = decodeURIComponent(target.password);
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), "pss-pgbouncer-"));
  // PgBouncer refuses to run as root: it switches to nobody, who must read the configuration.
  await chmod(dir, 0o755);
  const ini = join(dir, "pgbouncer.ini");
  await writeFile(
    ini,
    [
      "[databases]",
      `${database} = host=${target.hostname} port=${target.port || "5432"} dbname=${database} user=${user} password=${password}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      // Clients are not authenticated by the pooler (loopback, a test); it logs in to the server as the user above.
      "auth_type = any",
      "pool_mode = transaction",
      `default_pool_size = ${opts.poolSize ?? 4}`,
      "max_client_conn = 200",
      "server_reset_query =",
      "ignore_startup_parameters = extra_float_digits",
      "log_connections = 0",
      "log_disconnections = 0",
      "",
    ].join("\n"),
  );
  await chmod(ini, 0o644);
  const args = process.getuid?.() === 0 ? [PGBOUNCER, "-u", "nobody", ini] : [PGBOUNCER, ini];
  const proc = Bun.spawn(args, { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  let output = "";
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) output = (output + decoder.decode(chunk)).slice(-20_000);
  };
  void collect(proc.stdout);
  void collect(proc.stderr);
  const stop = async () => {
    proc.kill("SIGTERM");
    const timer = setTimeout(() => proc.kill("SIGKILL"), 5_000);
    await proc.exited;
    clearTimeout(timer);
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 15_000;
  for (;;) {
    const up = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } }).then(
      (s) => (s.end(), true),
      () => false,
    );
    if (up) break;
    if (proc.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`pgbouncer did not start:\n${output}`);
    }
    await Bun.sleep(100);
  }
  const url = new URL(databaseUrl);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return { url: url.toString(), port, output: () => output, stop };
}
