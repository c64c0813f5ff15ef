// One `bun test` process of `npm test`: its output as whole lines, in the order they came (stdout and stderr
// apart), and its counts as bun test's summary states them.

export type Stream = "stdout" | "stderr";
export interface OutputLine {
  stream: Stream;
  line: string;
}

export interface BunTestCounts {
  passed: number;
  failed: number;
  skipped: number;
  /** Errors outside any test (an unhandled rejection between tests, a file that does not load). */
  errors: number;
}

export interface BunTestRun extends BunTestCounts {
  code: number;
  /** Killed at its time limit. */
  timedOut: boolean;
  seconds: number;
}

/** How long the output pipes may stay open after the process ended (its last lines still on their way). */
const PIPE_GRACE_MS = 5_000;

/** The lines bun test ends a run with: the version banner (stdout) and the summary (stderr). */
const SUMMARY_LINE =
  /^\s*(\d+ (pass|fail|skip|todo|errors?|snapshots?\b.*|expect\(\) calls)|Ran \d+ tests? across \d+ files?\..*)$/;
const BANNER_LINE = /^bun test v\d+\.\d+\.\d+/;

export function isRunFrame(line: OutputLine): boolean {
  const plain = line.line.replace(/\x1b\[[0-9;]*m/g, "");
  return line.stream === "stdout" ? BANNER_LINE.test(plain) : SUMMARY_LINE.test(plain);
}

/** The counts bun test's summary states (the last of each kind in the text: it ends the run). */
export function summaryCounts(text: string): BunTestCounts {
  const last = (kind: string) => {
    const all = [...text.replace(/\x1b\[[0-9;]*m/g, "").matchAll(new RegExp(`^\\s*(\\d+) ${kind}$`, "gm"))];
    return Number(all.at(-1)?.[1] ?? 0);
  };
  return { passed: last("pass"), failed: last("fail"), skipped: last("skip"), errors: last("errors?") };
}

/**
 * Runs `bun test` with the arguments and hands each whole line to onLine as it comes (a last line without its
 * newline at the end). With limitMs the process (and, with `--no-orphans` among the arguments, everything it
 * started) is killed when it runs longer: a hang ends as a failure, not as a CI run past its bound.
 */
export async function runBunTest(opts: {
  args: string[];
  env: Record<string, string | undefined>;
  cwd?: string;
  limitMs?: number;
  onLine: (line: OutputLine) => void;
}): Promise<BunTestRun> {
  const started = Date.now();
  const proc = Bun.spawn([process.execPath, "test", ...opts.args], {
    ...(opts.limitMs ? { timeout: opts.limitMs, killSignal: "SIGKILL" as const } : {}),
    env: opts.env,
    cwd: opts.cwd,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let stderrText = "";
  let open = true;
  const readers: { cancel(): Promise<void> }[] = [];
  const pump = async (stream: Stream, source: ReadableStream<Uint8Array>) => {
    const reader = source.getReader();
    readers.push(reader);
    const decoder = new TextDecoder();
    let partial = "";
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done || !open) break;
      const text = decoder.decode(value, { stream: true });
      if (stream === "stderr") stderrText = (stderrText + text).slice(-8000);
      const lines = (partial + text).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) opts.onLine({ stream, line });
    }
    partial += decoder.decode();
    if (partial) opts.onLine({ stream, line: partial });
  };
  const pumps = Promise.all([pump("stdout", proc.stdout), pump("stderr", proc.stderr)]);
  const code = await proc.exited;
  // A process the file started and left running (detached, or killed with the file but for its grandchildren) may
  // hold the pipes open: what it prints after the file ended is not the file's, and must not hold the run up.
  const drained = await Promise.race([pumps.then(() => true), Bun.sleep(PIPE_GRACE_MS).then(() => false)]);
  if (!drained) {
    open = false;
    for (const reader of readers) await reader.cancel().catch(() => {});
    await pumps;
  }
  const timedOut = Boolean(opts.limitMs) && proc.signalCode === "SIGKILL";
  return { ...summaryCounts(stderrText), code, timedOut, seconds: (Date.now() - started) / 1000 };
}
