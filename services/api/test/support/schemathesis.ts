// Schemathesis for the contract test: a pinned version from PyPI in a virtual environment under the project's
// cache directory (the same one the infra runner uses), installed once and reused.
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export const SCHEMATHESIS_VERSION = "4.32.5";

function cacheDir(): string {
  const env = process.env;
  return env.PSS_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "partner-syndication-service");
}

async function run(cmd: string[]): Promise<void> {
  const proc = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`${cmd.join(" ")} failed (${code}):\n${(out + err).slice(-3000)}`);
}

/** Path of the `st` executable; installs Schemathesis first if this version is not there yet. */
export async function ensureSchemathesis(): Promise<string> {
  const venv = join(cacheDir(), `schemathesis-${SCHEMATHESIS_VERSION}`);
  const st = join(venv, "bin", "st");
  // The marker is written last: a half-finished install is never taken for a finished one.
  const marker = join(venv, ".installed");
  if (existsSync(marker) && existsSync(st)) return st;

  // No marker: nothing, or an interrupted install. Start clean (a venv's scripts name their own path, so it is
  // built in place; the marker is what makes it count).
  mkdirSync(cacheDir(), { recursive: true });
  rmSync(venv, { recursive: true, force: true });
  await run(["python3", "-m", "venv", venv]);
  await run([
    join(venv, "bin", "python"),
    "-m",
    "pip",
    "install",
    "--disable-pip-version-check",
    "--quiet",
    `schemathesis==${SCHEMATHESIS_VERSION}`,
  ]);
  writeFileSync(marker, `${SCHEMATHESIS_VERSION}\n`);
  return st;
}
