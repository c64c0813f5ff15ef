// Detached server processes tracked by pid files, so `up` can tell what already runs and `down` can stop it.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { dirname } from "node:path";

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function readPid(pidFile: string): number | null {
  if (!existsSync(pidFile)) return null;
  // The first line: PostgreSQL's postmaster.pid has more lines after it.
  const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]!.trim());
  return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? pid : null;
}

/** Starts a long-running process detached from this one, stdout and stderr appended to logFile. */
export function startDetached(opts: {
  cmd: string;
  args: string[];
  cwd: string;
  logFile: string;
  pidFile: string;
  env?: Record<string, string>;
}): number {
  mkdirSync(dirname(opts.logFile), { recursive: true });
  const fd = openSync(opts.logFile, "a");
  const child = spawn(opts.cmd, opts.args, {
    cwd: opts.cwd,
    detached: true,
    stdio: ["ignore", fd, fd],
    env: { ...process.env, ...opts.env },
  });
  closeSync(fd);
  child.unref();
  if (!child.pid) throw new Error(`could not start ${opts.cmd}`);
  writeFileSync(opts.pidFile, String(child.pid));
  return child.pid;
}

/** `signal` (SIGTERM unless given), then SIGKILL after graceMs. Resolves once the process is gone. */
export async function stopPid(pid: number, opts: { graceMs?: number; signal?: NodeJS.Signals } = {}): Promise<void> {
  try {
    process.kill(pid, opts.signal ?? "SIGTERM");
  } catch {
    return;
  }
  const deadline = Date.now() + (opts.graceMs ?? 20_000);
  while (isAlive(pid) && Date.now() < deadline) await Bun.sleep(100);
  if (isAlive(pid)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
    while (isAlive(pid)) await Bun.sleep(50);
  }
}

export function removeFile(path: string): void {
  rmSync(path, { force: true });
}

/** Runs a short command to completion; throws with its output when it fails. */
export async function runCommand(
  cmd: string[],
  opts: { cwd?: string; env?: Record<string, string> } = {},
): Promise<string> {
  const proc = Bun.spawn(cmd, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}\n${err || out}`.trim());
  return out;
}

export async function isPortOpen(port: number, host = "127.0.0.1"): Promise<boolean> {
  try {
    const socket = await Bun.connect({ hostname: host, port, socket: { data() {} } });
    socket.end();
    return true;
  } catch {
    return false;
  }
}

export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  logFile: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await Bun.sleep(250);
  }
  throw new Error(`${what} did not become ready within ${Math.round(timeoutMs / 1000)} s; see its log: ${logFile}`);
}
