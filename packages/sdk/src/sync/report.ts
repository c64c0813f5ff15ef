// The per-record report (--report): one NDJSON line per record.
import { closeSync, openSync, writeSync } from "node:fs";

export type Outcome = "created" | "updated" | "unchanged" | "skipped" | "failed";

export interface ReportLine {
  kind: "broker" | "listing" | null;
  id: string | null;
  outcome: Outcome;
  /** The API's status code; null when nothing was sent (skipped, refused locally) or no answer came. */
  httpStatus: number | null;
  /** serviceBrokerId (a string) or serviceListingId (an integer). */
  serviceId: string | number | null;
  /** serviceProfileUrl or serviceListingUrl. */
  url: string | null;
  error: string | null;
  /** --dry-run only: the fields the real PUT would change. */
  changedPaths?: string[];
  /** --archive-missing: this line is the ARCHIVED status set on a listing missing from the feed. */
  archive?: true;
  /** The API's quality warnings for the record as it stands after this PUT (or would, in a dry run); never blocking. Absent when there are none. */
  warnings?: { path: string; code: string; message: string }[];
  /** The API's quality score, 0-100 (docs/partner-api.md), when it answered with one. */
  qualityScore?: number;
}

export interface ReportSink {
  write(line: ReportLine): void;
  close(): void;
}

export const nullReport: ReportSink = { write() {}, close() {} };

/** Writes each line as it comes (a killed run keeps the lines of what it finished); "-" is stdout. */
export function fileReport(path: string): ReportSink {
  const fd = path === "-" ? 1 : openSync(path, "w");
  let buffer: string[] = [];
  let timer: ReturnType<typeof setTimeout> | null = null;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (buffer.length) writeSync(fd, `${buffer.join("\n")}\n`);
    buffer = [];
  };
  return {
    write(line) {
      buffer.push(JSON.stringify(line));
      if (buffer.length >= 500) flush();
      else timer ??= setTimeout(flush, 200);
    },
    close() {
      flush();
      if (fd !== 1) closeSync(fd);
    },
  };
}
