// Reads a feed file into records. NDJSON: one record a line, {"kind":"broker"|"listing","id":"…","body":{…}}.
// CSV: see csv.ts. A line that cannot be read becomes a problem (reported as failed); the rest go on.
import { readFileSync } from "node:fs";
import { bodyFieldType } from "../validation/record-validator.ts";
import { csvRecords } from "./csv.ts";

export type FeedFormat = "ndjson" | "csv";

export interface FeedRecord {
  /** 1-based line of the record in the feed file. */
  line: number;
  kind: "broker" | "listing";
  id: string;
  body: Record<string, unknown>;
}

export interface FeedProblem {
  line: number;
  /** What could be read of the record, if anything. */
  kind: string | null;
  id: string | null;
  error: string;
}

export interface Feed {
  records: FeedRecord[];
  problems: FeedProblem[];
}

export function formatOf(path: string, explicit?: string): FeedFormat {
  if (explicit === "csv" || explicit === "ndjson") return explicit;
  if (explicit) throw new Error(`--format must be ndjson or csv, not ${explicit}`);
  return /\.csv$/i.test(path) ? "csv" : "ndjson";
}

const KINDS = new Set(["broker", "listing"]);

function checkRecord(line: number, kind: unknown, id: unknown, body: unknown): FeedRecord | FeedProblem {
  const k = typeof kind === "string" ? kind : null;
  const i = typeof id === "string" ? id : null;
  if (!k || !KINDS.has(k)) return { line, kind: k, id: i, error: `line ${line}: kind must be "broker" or "listing"` };
  if (i === null || i === "")
    return { line, kind: k, id: null, error: `line ${line}: id must be a non-empty string (the external ID)` };
  if (!body || typeof body !== "object" || Array.isArray(body))
    return { line, kind: k, id: i, error: `line ${line}: body must be a JSON object (the PUT body)` };
  return { line, kind: k as FeedRecord["kind"], id: i, body: body as Record<string, unknown> };
}

export function parseNdjson(text: string): Feed {
  const feed: Feed = { records: [], problems: [] };
  const lines = text.split("\n");
  lines.forEach((raw, index) => {
    const line = index + 1;
    const content = (index === 0 ? raw.replace(/^\uFEFF/, "") : raw).trim();
    if (content === "") return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(content);
    } catch {
      feed.problems.push({ line, kind: null, id: null, error: `line ${line}: not valid JSON` });
      return;
    }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
      feed.problems.push({
        line,
        kind: null,
        id: null,
        error: `line ${line}: must be a JSON object {"kind","id","body"}`,
      });
      return;
    }
    const { kind, id, body, ...rest } = parsed as Record<string, unknown>;
    const extra = Object.keys(rest);
    const checked = checkRecord(line, kind, id, body);
    if ("error" in checked) feed.problems.push(checked);
    else if (extra.length)
      feed.problems.push({
        line,
        kind: checked.kind,
        id: checked.id,
        error: `line ${line}: unknown member ${extra.join(", ")} (a record has kind, id and body)`,
      });
    else feed.records.push(checked);
  });
  return feed;
}

export function parseCsvFeed(text: string): Feed {
  const { records, problems } = csvRecords(text, bodyFieldType);
  const feed: Feed = { records: [], problems: [...problems] };
  for (const r of records) {
    const checked = checkRecord(r.line, r.kind, r.id, r.body);
    if ("error" in checked) feed.problems.push(checked);
    else feed.records.push(checked);
  }
  return feed;
}

export function readFeed(path: string, format: FeedFormat): Feed {
  const text = readFileSync(path, "utf8");
  return format === "csv" ? parseCsvFeed(text) : parseNdjson(text);
}
