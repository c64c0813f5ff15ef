// The lint step of `npm test`: `biome check` (rules and formatting, biome.jsonc) over source, tests and scripts,
// before any server starts, so a violation costs seconds, not a whole run. PSS_LINT=0 leaves it out.
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const BIOME = join(ROOT, "node_modules", ".bin", "biome");

export interface LintResult {
  ok: boolean;
  seconds: number;
}

/** Runs `biome check`; its report goes to stderr as Biome prints it, followed by one line saying what to do. */
export async function lintStep(log: (line: string) => void = (line) => console.error(line)): Promise<LintResult> {
  const t0 = Date.now();
  const proc = Bun.spawn([BIOME, "check", "--error-on-warnings", "--max-diagnostics=50"], {
    cwd: ROOT,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  const seconds = (Date.now() - t0) / 1000;
  if (code === 0) {
    log(`test: lint passed in ${seconds.toFixed(1)} s (biome check)`);
    return { ok: true, seconds };
  }
  process.stderr.write(out + err);
  log(
    `test: LINT FAILED (biome check, ${seconds.toFixed(1)} s): fix the rule violations above; ` +
      "`npm run format` rewrites formatting-only differences, `npm run lint` checks again. PSS_LINT=0 skips this step.",
  );
  return { ok: false, seconds };
}
