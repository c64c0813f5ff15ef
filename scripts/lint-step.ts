// The static checks of `npm test`, before any server starts, so a violation costs seconds, not a whole run:
// `biome check` (rules and formatting, biome.jsonc) over source, tests and scripts, then `tsc --noEmit` (the
// whole workspace's types, tsconfig.json). PSS_LINT=0 leaves both out.
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const BIN = join(ROOT, "node_modules", ".bin");

export interface LintResult {
  ok: boolean;
  seconds: number;
}

interface Check {
  name: string;
  cmd: string[];
  advice: string;
}

const CHECKS: Check[] = [
  {
    name: "biome check",
    cmd: [join(BIN, "biome"), "check", "--error-on-warnings", "--max-diagnostics=50"],
    advice:
      "fix the rule violations above; `npm run format` rewrites formatting-only differences, `npm run lint` checks again",
  },
  {
    name: "tsc --noEmit",
    cmd: [join(BIN, "tsc"), "--noEmit", "-p", "."],
    advice: "fix the type errors above; `npm run typecheck` checks again",
  },
];

async function runCheck(check: Check, log: (line: string) => void): Promise<boolean> {
  const t0 = Date.now();
  const proc = Bun.spawn(check.cmd, { cwd: ROOT, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  const seconds = ((Date.now() - t0) / 1000).toFixed(1);
  if (code === 0) {
    log(`test: ${check.name} passed in ${seconds} s`);
    return true;
  }
  process.stderr.write(out + err);
  log(`test: LINT FAILED (${check.name}, ${seconds} s): ${check.advice}. PSS_LINT=0 skips this step.`);
  return false;
}

/** Runs every check (each report goes to stderr as the tool prints it, then one line saying what to do). */
export async function lintStep(log: (line: string) => void = (line) => console.error(line)): Promise<LintResult> {
  const t0 = Date.now();
  let ok = true;
  for (const check of CHECKS) ok = (await runCheck(check, log)) && ok;
  return { ok, seconds: (Date.now() - t0) / 1000 };
}
