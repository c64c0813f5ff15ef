// The checkpoint: what pss-sync knows the API has, per record, as an append-only NDJSON journal.
//
// Before a record is sent, an intent line {kind, id, sending: <hash of the body>, …} is written to the file
// (a write(2), so it survives the process however it ends: SIGKILL, a crash, Ctrl-C); when the API acknowledges
// it, an acknowledgement line {kind, id, hash, serviceId, url} follows. The last
// line of a record wins on reading, so a record whose latest line is an intent was in flight when the run ended
// (killed, Ctrl-C, no answer after every retry): the API may or may not have applied it, so what it holds is
// unknown and --resume sends that record again whatever its hash. Without the intent line, an applied but
// unacknowledged PUT would leave the older hash behind, and a feed that went back to the older body would be
// skipped while the API kept the newer one. Acknowledgements are flushed in batches (one lost to a kill only
// makes the record in doubt: it is sent again, and PUTs are idempotent). At the end of a run the journal is
// compacted (written to a temporary file, synced to disk, then renamed).
//
// Intents are not synced to disk one by one (fdatasync): that doubled pss-sync's CPU per record (about 50 µs
// more per record, measured with 10,000 records against a stub API) for the one case it adds, the machine itself
// losing power mid-run; docs/sync.md says what to do then (one run without --resume).
//
// The header names the API URL, the key mode and the partner (GET /partner/v1/health's partnerId): another
// partner's key sees other records, so a checkpoint of one partner must never make another partner's run skip.
import {
  closeSync,
  existsSync,
  fdatasyncSync,
  openSync,
  readFileSync,
  renameSync,
  writeFileSync,
  writeSync,
} from "node:fs";

export interface CheckpointEntry {
  kind: "broker" | "listing";
  id: string;
  /** Content hash of the body the API last acknowledged (content-hash.ts); null when it never acknowledged one. */
  hash: string | null;
  serviceId: string | number | null;
  url: string | null;
  /** Set when pss-sync itself archived the listing because it was missing from a full feed. */
  archived?: boolean;
  /** The hash of a body sent without an answer (in flight when the run ended): what the API holds is unknown. */
  sending?: string;
}

interface Header {
  type: "pss-sync-checkpoint";
  version: 2;
  apiUrl: string;
  /** "pss_live" or "pss_test": records of the two key modes live apart, so their checkpoints must too. */
  keyMode: string;
  /** The partner whose records these are (checkpointOwner); absent in checkpoints of version 1. */
  partner?: string;
}

export class CheckpointMismatchError extends Error {}

const keyOf = (kind: string, id: string) => `${kind}\u0000${id}`;
export const keyModeOf = (apiKey: string) => /^(pss_[a-z]+)_/.exec(apiKey)?.[1] ?? "unknown";

/** Whether the API's copy of a record is known to be exactly `hash` (so --resume may skip it). */
export const acknowledged = (entry: CheckpointEntry | undefined, hash: string) =>
  entry !== undefined && entry.sending === undefined && entry.hash === hash;

export interface CheckpointOwner {
  apiUrl: string;
  apiKey: string;
  /**
   * Who the records belong to: `partner:<partnerId>` from GET /partner/v1/health, or (an API that does not name
   * the partner) `key:<fingerprint of the key>`. See partnerIdentity in pss-sync.ts.
   */
  partner: string;
}

export interface Checkpoint {
  readonly path: string;
  get(kind: string, id: string): CheckpointEntry | undefined;
  entries(): IterableIterator<CheckpointEntry>;
  /** Records that this body of the record is about to be sent: written (with every line before it) before it returns. */
  intend(kind: CheckpointEntry["kind"], id: string, hash: string): void;
  /** Records an acknowledged record; written out by the next flush. */
  record(entry: CheckpointEntry): void;
  /** The API refused the body (it stored nothing): the record is again what it was before intend(). */
  refused(kind: CheckpointEntry["kind"], id: string): void;
  /** Forgets a record the API turned out not to have (a never-acknowledged intent). */
  forget(kind: CheckpointEntry["kind"], id: string): void;
  /** Appends what was recorded since the last flush. */
  flush(): void;
  /** Flushes, then rewrites the file with one line per record. */
  compact(): void;
  close(): void;
}

function describeOwner(h: Pick<Header, "apiUrl" | "keyMode">) {
  return `${h.apiUrl} with a ${h.keyMode} key`;
}

/** The flag that binds a checkpoint of version 1 (no partner recorded) to this run's partner (pss-sync.ts). */
export const BIND_CHECKPOINT_FLAG = "--bind-checkpoint";

/**
 * Opens (or creates) the checkpoint of a feed. Refuses one written for another API URL, key mode or partner. A
 * checkpoint of version 1 (no partner recorded) could be any partner's: it is refused unless `bindUnowned` says
 * the user vouches that it is this partner's, and then it is bound to this run's partner from now on.
 */
export function openCheckpoint(
  path: string,
  owner: CheckpointOwner,
  opts: { flushEveryMs?: number; bindUnowned?: boolean } = {},
): Checkpoint {
  const header: Header = {
    type: "pss-sync-checkpoint",
    version: 2,
    apiUrl: owner.apiUrl.replace(/\/+$/, ""),
    keyMode: keyModeOf(owner.apiKey),
    partner: owner.partner,
  };
  const entries = new Map<string, CheckpointEntry>();
  let tornTail = false;
  let adopt = false;
  if (existsSync(path)) {
    const text = readFileSync(path, "utf8");
    tornTail = text.length > 0 && !text.endsWith("\n");
    let found: Header | null = null;
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line);
      } catch {
        continue; // a line torn by a kill mid-write: that record is simply in doubt or sent again
      }
      if (parsed.type === "pss-sync-checkpoint") found = parsed as unknown as Header;
      else if ((parsed.kind === "broker" || parsed.kind === "listing") && typeof parsed.id === "string") {
        const key = keyOf(parsed.kind, parsed.id);
        if (parsed.forget === true) entries.delete(key);
        else if (typeof parsed.hash === "string" || parsed.hash === null)
          entries.set(key, parsed as unknown as CheckpointEntry);
      }
    }
    if (!found)
      throw new CheckpointMismatchError(`${path} is not a pss-sync checkpoint; name another file with --checkpoint`);
    if (found.apiUrl !== header.apiUrl || found.keyMode !== header.keyMode) {
      throw new CheckpointMismatchError(
        `${path} belongs to ${describeOwner(found)}, not ${describeOwner(header)}; name another file with --checkpoint (or delete it: the next run then sends every record again)`,
      );
    }
    if (found.partner !== undefined && found.partner !== header.partner) {
      throw new CheckpointMismatchError(
        `${path} belongs to another partner (${found.partner}), not to this key's partner (${header.partner}): resuming from it would skip records this partner never sent; name another file with --checkpoint (or delete it: the next run then sends every record again)`,
      );
    }
    adopt = found.partner === undefined;
    if (adopt && !opts.bindUnowned) {
      throw new CheckpointMismatchError(
        `${path} was written by an earlier pss-sync that did not record whose records it holds: resuming from another partner's checkpoint would skip records this partner never sent. If it is this partner's (${header.partner}), run again with ${BIND_CHECKPOINT_FLAG} to bind it to this partner; otherwise name another file with --checkpoint (or delete it: the next run then sends every record again)`,
      );
    }
  } else {
    writeFileSync(path, `${JSON.stringify(header)}\n`);
  }

  let fd = openSync(path, "a");
  // A run killed mid-line left a fragment: end it, so the next line is not glued to it.
  if (tornTail) writeSync(fd, "\n");
  // A version 1 checkpoint the user bound: from now on it names its partner (later headers win on reading).
  if (adopt) writeSync(fd, `${JSON.stringify(header)}\n`);
  let pending: string[] = [];
  const flushEveryMs = opts.flushEveryMs ?? 200;
  let timer: ReturnType<typeof setTimeout> | null = null;
  /** What a record was before its intent: refused() puts it back. */
  const beforeIntent = new Map<string, CheckpointEntry | null>();
  const write = (text: string) => writeSync(fd, text);
  const put = (entry: CheckpointEntry) => {
    entries.set(keyOf(entry.kind, entry.id), entry);
    pending.push(JSON.stringify(entry));
  };
  const scheduleFlush = () => {
    timer ??= setTimeout(() => checkpoint.flush(), flushEveryMs);
  };

  const checkpoint: Checkpoint = {
    path,
    get: (kind, id) => entries.get(keyOf(kind, id)),
    entries: () => entries.values(),
    intend(kind, id, hash) {
      const key = keyOf(kind, id);
      const previous = entries.get(key);
      if (!beforeIntent.has(key)) beforeIntent.set(key, previous ? { ...previous } : null);
      put({
        kind,
        id,
        hash: previous?.hash ?? null,
        serviceId: previous?.serviceId ?? null,
        url: previous?.url ?? null,
        ...(previous?.archived ? { archived: true } : {}),
        sending: hash,
      });
      checkpoint.flush();
    },
    record(entry) {
      const { sending: _, ...acked } = entry;
      beforeIntent.delete(keyOf(entry.kind, entry.id));
      put(acked);
      scheduleFlush();
    },
    refused(kind, id) {
      const key = keyOf(kind, id);
      const previous = beforeIntent.get(key);
      if (previous === undefined) return;
      beforeIntent.delete(key);
      if (previous) put(previous);
      else checkpoint.forget(kind, id);
      scheduleFlush();
    },
    forget(kind, id) {
      entries.delete(keyOf(kind, id));
      pending.push(JSON.stringify({ kind, id, forget: true }));
      scheduleFlush();
    },
    flush() {
      if (timer) clearTimeout(timer);
      timer = null;
      if (!pending.length) return;
      const text = `${pending.join("\n")}\n`;
      pending = [];
      write(text);
    },
    compact() {
      checkpoint.flush();
      const tmp = `${path}.tmp-${process.pid}`;
      const tmpFd = openSync(tmp, "w");
      writeSync(
        tmpFd,
        [JSON.stringify(header), ...[...entries.values()].map((e) => JSON.stringify(e))].join("\n") + "\n",
      );
      // Synced before the rename replaces the journal: the rename must never expose a file that is not on disk.
      fdatasyncSync(tmpFd);
      closeSync(tmpFd);
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
