// Progress of a sync on stderr: a bar redrawn in place on a terminal, NDJSON lines otherwise (CI logs,
// pipes), and the summary at the end in the same style.
import type { ProgressEvent, SyncSummary } from "../sync/run-sync.ts";
import type { ReportLine } from "../sync/report.ts";

export type ProgressMode = "bar" | "ndjson" | "none";

export interface ProgressOutput {
  update(event: ProgressEvent): void;
  /** Clears the bar being drawn (before a question to the user); the next update draws it again. */
  interrupt(): void;
  /** A line of text for the user during the run, on a line of its own. */
  message(text: string): void;
  summary(summary: SyncSummary, failures: ReportLine[]): void;
}

interface Writable {
  write(text: string): unknown;
  columns?: number;
}

const rate = (n: number, ms: number) => (ms > 0 ? Math.round((n * 1000) / ms) : 0);

export function createProgress(
  mode: ProgressMode,
  out: Writable = process.stderr,
  now: () => number = () => performance.now(),
): ProgressOutput {
  const started = now();
  let lastDraw = -Infinity;
  let lastPhase = "";
  let drawn = false;

  const bar = (e: ProgressEvent) => {
    const width = 24;
    const fraction = e.total ? Math.min(1, e.done / e.total) : 1;
    const filled = Math.round(fraction * width);
    const elapsed = now() - started;
    const perSecond = rate(e.requests, elapsed);
    const remaining =
      e.done > 0 && e.done < e.total ? Math.round(((elapsed / e.done) * (e.total - e.done)) / 1000) : null;
    const c = e.counts;
    const text = `${e.phase.padEnd(10)} [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${e.done}/${e.total} ${Math.floor(fraction * 100)}%  created ${c.created} updated ${c.updated} unchanged ${c.unchanged} skipped ${c.skipped} failed ${c.failed}  ${perSecond} req/s${remaining !== null ? `  ETA ${remaining}s` : ""}`;
    out.write(`\r\x1b[2K${text.slice(0, Math.max(20, (out.columns ?? 200) - 1))}`);
    drawn = true;
  };

  const interrupt = () => {
    if (drawn) out.write("\r\x1b[2K");
    drawn = false;
    lastPhase = ""; // the next update draws at once
  };

  return {
    update(e) {
      if (mode === "none") return;
      const t = now();
      const phaseChanged = e.phase !== lastPhase;
      const interval = mode === "bar" ? 100 : 1000;
      if (!phaseChanged && t - lastDraw < interval) return;
      lastDraw = t;
      lastPhase = e.phase;
      if (mode === "bar") bar(e);
      else
        out.write(
          `${JSON.stringify({ type: "progress", phase: e.phase, done: e.done, total: e.total, ...e.counts, requests: e.requests, elapsedMs: Math.round(t - started) })}\n`,
        );
    },
    interrupt,
    message(text) {
      interrupt();
      out.write(`${text}\n`);
    },
    summary(s, failures) {
      const shown = failures
        .slice(0, 10)
        .map((f) => ({ kind: f.kind, id: f.id, httpStatus: f.httpStatus, error: f.error }));
      if (mode === "ndjson") {
        out.write(`${JSON.stringify({ type: "summary", ...s, firstFailures: shown })}\n`);
        return;
      }
      if (drawn) out.write("\n");
      const seconds = (s.durationMs / 1000).toFixed(1);
      out.write(
        `pss-sync${s.dryRun ? " (dry run: nothing stored)" : ""}: ${s.total} records in ${seconds} s, ${s.requests} requests (${rate(s.requests, s.durationMs)}/s): ` +
          `${s.created} ${s.dryRun ? "would be created" : "created"}, ${s.updated} ${s.dryRun ? "would be updated" : "updated"}, ${s.unchanged} unchanged, ${s.skipped} skipped, ${s.failed} failed` +
          `${s.archived ? `; ${s.archived} missing listings ${s.dryRun ? "would be " : ""}archived` : ""}\n`,
      );
      const tallies = [
        ...Object.entries(s.warnings?.listings ?? {}).map(([code, n]) => ({
          code,
          n,
          what: n === 1 ? "listing" : "listings",
        })),
        ...Object.entries(s.warnings?.brokers ?? {}).map(([code, n]) => ({
          code,
          n,
          what: n === 1 ? "broker" : "brokers",
        })),
      ].sort((a, b) => b.n - a.n || a.code.localeCompare(b.code));
      if (tallies.length) {
        out.write(`pss-sync: quality warnings (nothing was refused for them; --report <file> lists each record's):\n`);
        for (const t of tallies) out.write(`  ${t.code}: ${t.n} ${t.what}\n`);
      }
      if (s.archiveSkipped) out.write(`pss-sync: --archive-missing archived nothing: ${s.archiveSkipped}\n`);
      if (s.interrupted) out.write("pss-sync: interrupted; run again with --resume to continue\n");
      for (const f of shown)
        out.write(
          `  failed ${f.kind ?? "record"} ${f.id ?? ""}: ${f.error}${f.httpStatus ? ` [HTTP ${f.httpStatus}]` : ""}\n`,
        );
      if (failures.length > shown.length)
        out.write(`  … and ${failures.length - shown.length} more failures (--report <file> lists every record)\n`);
    },
  };
}
