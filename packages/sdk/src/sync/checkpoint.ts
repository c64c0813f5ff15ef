// The checkpoint: what pss-sync knows the API has, per record, as an append-only NDJSON journal. Each record
// the API acknowledged appends one line {kind, id, hash, serviceId, url}; a killed run loses at most the lines
// of its last flush (those records are sent again on --resume: PUTs are idempotent, the API stores a repeat as a
// no-op). At the end of a run the journal is compacted (written to a temporary file, then renamed).
import { closeSync, existsSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from "node:fs";

export interface CheckpointEntry {
  kind: "broker" | "listing";
  id: string;
  /** Content hash of the body the API acknowledged (content-hash.ts). */
  hash: string;
  serviceId: string | number | null;
  url: string | null;
  /** Set when pss-sync itself archived the listing because it was missing from a full feed. */
  archived?: boolean;
}

interface Header {
  type: "pss-sync-checkpoint";
  version: 1;
  apiUrl: string;
  /** "pss_live" or "pss_test": records of the two key modes live apart, so their checkpoints must too. */
  keyMode: string;
}

export class CheckpointMismatchError extends Error {}

const keyOf = (kind: string, id: string) => `${kind}\u0000${id}`;
export const keyModeOf = (apiKey: string) => /^(pss_[a-z]+)_/.exec(apiKey)?.[1] ?? "unknown";

export interface Checkpoint {
  readonly path: string;
  get(kind: string, id: string): CheckpointEntry | undefined;
  entries(): IterableIterator<CheckpointEntry>;
  /** Records an acknowledged record; written out by the next flush. */
  record(entry: CheckpointEntry): void;
  /** Appends what was recorded since the last flush. */
  flush(): void;
  /** Flushes, then rewrites the file with one line per record. */
  compact(): void;
  close(): void;
}

/** Opens (or creates) the checkpoint of a feed. Refuses one written for another API URL or key mode. */
export function openCheckpoint(path: string, owner: { apiUrl: string; apiKey: string }, opts: { flushEveryMs?: number } = {}): Checkpoint {
  const header: Header = { type: "pss-sync-checkpoint", version: 1, apiUrl: owner.apiUrl.replace(/\/+$/, ""), keyMode: keyModeOf(owner.apiKey) };
  const entries = new Map<string, CheckpointEntry>();
  let tornTail = false;
  if (existsSync(path)) {
    const text = readFileSync(path, "utf8");
    tornTail = text.length > 0 && !text.endsWith("\n");
    const lines = text.split("\n");
    let found: Header | null = null;
    for (const line of lines) {
      if (!line.trim()) continue;
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line);
      } catch {
        continue; // a line torn by a kill mid-write: its record is simply sent again
      }
      if (parsed.type === "pss-sync-checkpoint") found = parsed as unknown as Header;
      else if ((parsed.kind === "broker" || parsed.kind === "listing") && typeof parsed.id === "string" && typeof parsed.hash === "string") {
        entries.set(keyOf(parsed.kind, parsed.id), parsed as unknown as CheckpointEntry);
      }
    }
    if (!found) throw new CheckpointMismatchError(`${path} is not a pss-sync checkpoint; name another file with --checkpoint`);
    if (found.apiUrl !== header.apiUrl || found.keyMode !== header.keyMode) {
      throw new CheckpointMismatchError(
        `${path} belongs to ${found.apiUrl} with a ${found.keyMode} key, not ${header.apiUrl} with a ${header.keyMode} key; name another file with --checkpoint (or delete it: the next run then sends every record again)`,
      );
    }
  } else {
    writeFileSync(path, `${JSON.stringify(header)}\n`);
  }

  let fd = openSync(path, "a");
  // A run killed mid-line left a fragment: end it, so the next line is not glued to it.
  if (tornTail) writeSync(fd, "\n");
  let pending: string[] = [];
  const flushEveryMs = opts.flushEveryMs ?? 200;
  let timer: ReturnType<typeof setTimeout> | null = null;

  const checkpoint: Checkpoint = {
    path,
    get: (kind, id) => entries.get(keyOf(kind, id)),
    entries: () => entries.values(),
    record(entry) {
      entries.set(keyOf(entry.kind, entry.id), entry);
      pending.push(JSON.stringify(entry));
      timer ??= setTimeout(() => checkpoint.flush(), flushEveryMs);
    },
    flush() {
      if (timer) clearTimeout(timer);
      timer = null;
      if (!pending.length) return;
      const text = `${pending.join("\n")}\n`;
      pending = [];
      writeSync(fd, text);
    },
    compact() {
      checkpoint.flush();
      const tmp = `${path}.tmp-${process.pid}`;
      writeFileSync(tmp, [JSON.stringify(header), ...[...entries.values()].map((e) => JSON.stringify(e))].join("\n") + "\n");
      closeSync(fd);
      renameSync(tmp, path);
      fd = openSync(path, "a");
    },
    close() {
      checkpoint.flush();
      closeSync(fd);
    },
  };
  return checkpoint;
}
