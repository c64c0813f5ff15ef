// pss-sync run the way a user runs it, as its own process, so a test can read its progress and SIGKILL it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, waitFor } from "./api-process.ts";

export interface CliRun {
  proc: ReturnType<typeof Bun.spawn>;
  /** stderr lines so far (NDJSON progress and summary with --progress ndjson). */
  lines: string[];
  /** Resolves with the first progress event that satisfies the predicate. */
  progress(predicate: (event: Record<string, any>) => boolean, timeoutMs?: number): Promise<Record<string, any>>;
  /** Waits for the exit; the summary line, parsed. */
  finished(): Promise<{ code: number; summary: Record<string, any> | null; stderr: string }>;
}

/** pss-sync as a user runs it: its own process, key and URL from the environment, NDJSON progress on stderr. */
export function spawnCli(args: string[], env: { PSS_API_URL: string; PSS_API_KEY: string }): CliRun {
  const proc = Bun.spawn(
    [process.execPath, join(ROOT, "packages/sdk/src/cli/main.ts"), ...args, "--progress", "ndjson"],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const lines: string[] = [];
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buffered = "";
    for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      const parts = buffered.split("\n");
      buffered = parts.pop()!;
      lines.push(...parts);
    }
    if (buffered) lines.push(buffered);
  })();
  const parsed = () => lines.filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, any>);
  return {
    proc,
    lines,
    async progress(predicate, timeoutMs = 60_000) {
      let found: Record<string, any> | undefined;
      await waitFor(
        "a progress line",
        () => {
          found = parsed().find((e) => e.type === "progress" && predicate(e));
          if (!found && proc.exitCode !== null)
            throw new Error(`pss-sync exited (${proc.exitCode}) first:\n${lines.join("\n")}`);
          return found !== undefined;
        },
        timeoutMs,
      );
      return found!;
    },
    async finished() {
      const code = await proc.exited;
      await reading;
      return { code, summary: parsed().find((e) => e.type === "summary") ?? null, stderr: lines.join("\n") };
    },
  };
}

/** Reads an NDJSON file (a report). */
export function readNdjson(path: string): Record<string, any>[] {
  return readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l: string) => JSON.parse(l));
}
