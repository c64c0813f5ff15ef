// Runs the admin CLI the way the runbook (docs/operations.md) and README tell an operator to:
// `npm run --silent admin -- <command>`, from the repository root, as a separate process.
import { resolve } from "node:path";
import { testUrls } from "../../../../test/support/env.ts";

export const ROOT = resolve(import.meta.dir, "../../../..");

export interface AdminRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** The test servers' URLs (this test's database), plus overrides; a value of undefined removes the variable. */
export function adminEnv(overrides: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...testUrls(), ...overrides })) if (v !== undefined) env[k] = v;
  return env;
}

/** `command` is the part after `npm run --silent admin -- `, as words; `stdin`: what is piped in (else nothing). */
export async function admin(
  command: string[],
  env: Record<string, string> = adminEnv(),
  stdin?: string,
): Promise<AdminRun> {
  return run(["npm", "run", "--silent", "admin", "--", ...command], env, stdin);
}

/** A documented command line, run by the shell exactly as written (quotes and all). */
export async function shell(line: string, env: Record<string, string>): Promise<AdminRun> {
  return run(["sh", "-c", line], env);
}

async function run(argv: string[], env: Record<string, string>, stdin?: string): Promise<AdminRun> {
  const proc = Bun.spawn(argv, {
    cwd: ROOT,
    env,
    stdin: stdin === undefined ? "ignore" : new Blob([stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

/** The one JSON document a successful command prints on stdout (a pipe); throws with stderr otherwise. */
export function json<T = Record<string, any>>(r: AdminRun, what = "admin command"): T {
  if (r.code !== 0) throw new Error(`${what} exited ${r.code}: ${r.stderr.trim()}`);
  const text = r.stdout.trimEnd();
  if (text.includes("\n")) throw new Error(`${what} printed more than one line: ${r.stdout}`);
  return JSON.parse(text) as T;
}
