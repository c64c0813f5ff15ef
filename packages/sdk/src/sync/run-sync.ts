// One sync run: local validation, brokers before the listings that reference them, bounded concurrency under
// the pacer's budget, the checkpoint (skip what the API already has; every send is journalled before it goes
// out, so a send without an answer is sent again on --resume), and optionally ARCHIVED for listings that
// dropped out of a full feed. Every record ends as exactly one report line.
import { PssApiError, PssError } from "../client/errors.ts";
import type { PartnerClient } from "../client/partner-client.ts";
import type { BrokerBody, ListingBody } from "../types.ts";
import { problemsSentence, type RecordValidator } from "../validation/record-validator.ts";
import { acknowledged, type Checkpoint } from "./checkpoint.ts";
import { contentHash } from "./content-hash.ts";
import type { Feed, FeedRecord } from "./feed.ts";
import type { Outcome, ReportLine, ReportSink } from "./report.ts";

export type Phase = "reading" | "brokers" | "listings" | "archiving" | "done";

export interface Counts {
  created: number;
  updated: number;
  unchanged: number;
  skipped: number;
  failed: number;
}

export interface ProgressEvent {
  phase: Phase;
  /** Records finished so far (all phases) and the feed's total (plus listings to archive, once known). */
  done: number;
  total: number;
  counts: Counts;
  /** Requests sent so far (retries included). */
  requests: number;
}

export interface SyncOptions {
  client: PartnerClient;
  validator: RecordValidator;
  checkpoint: Checkpoint;
  report: ReportSink;
  dryRun?: boolean;
  /** Skip records whose content hash equals the one the API acknowledged last (never one sent without an answer). */
  resume?: boolean;
  /** Requests in flight at once (default 8). */
  concurrency?: number;
  /** Archive listings of the checkpoint that are absent from the feed; `confirm` is asked first (not in dry-run). */
  archiveMissing?: { confirm(ids: string[]): Promise<boolean> };
  onProgress?: (event: ProgressEvent) => void;
  /** Counts every request actually sent (the CLI's transport increments it). */
  requestCount?: () => number;
  signal?: AbortSignal;
}

/** How many records of each kind carry each warning code (from the PUT answers of this run; skipped records are not asked). */
export interface WarningSummary {
  listings: Record<string, number>;
  brokers: Record<string, number>;
}

export interface SyncSummary extends Counts {
  total: number;
  warnings: WarningSummary;
  archived: number;
  /** Why --archive-missing archived nothing, when it did not run. */
  archiveSkipped: string | null;
  durationMs: number;
  requests: number;
  dryRun: boolean;
  interrupted: boolean;
}

const ARCHIVE_BODY = { status: "ARCHIVED" } as const;

/** Statuses that say the body was refused (never retried, so no earlier attempt of the same send can have stored it). */
const refusesContent = (status: number) => status >= 400 && status < 500 && ![401, 403, 408, 429].includes(status);

/** A record ready to send: its body's JSON text made once. */
interface Prepared {
  kind: "broker" | "listing";
  id: string;
  body: Record<string, unknown>;
  json: string;
}

export async function runSync(feed: Feed, opts: SyncOptions): Promise<SyncSummary> {
  const started = performance.now();
  const counts: Counts = { created: 0, updated: 0, unchanged: 0, skipped: 0, failed: 0 };
  const concurrency = Math.max(1, opts.concurrency ?? 8);
  const requests = opts.requestCount ?? (() => 0);
  let total = feed.records.length + feed.problems.length;
  let done = 0;
  let phase: Phase = "reading";
  const progress = () => opts.onProgress?.({ phase, done, total, counts: { ...counts }, requests: requests() });

  const warnings: WarningSummary = { listings: {}, brokers: {} };
  /** The answer's warnings on the report line, counted once per code and record. */
  const quality = (kind: "broker" | "listing", answer: { warnings?: { path: string; code: string; message: string }[]; qualityScore?: number }) => {
    const list = answer.warnings ?? [];
    const tally = kind === "listing" ? warnings.listings : warnings.brokers;
    for (const code of new Set(list.map((w) => w.code))) tally[code] = (tally[code] ?? 0) + 1;
    return { ...(list.length ? { warnings: list } : {}), ...(answer.qualityScore !== undefined ? { qualityScore: answer.qualityScore } : {}) };
  };
  const finish = (line: ReportLine) => {
    counts[line.outcome] += 1;
    done += 1;
    opts.report.write(line);
    progress();
  };
  const failed = (kind: ReportLine["kind"], id: string | null, error: string, httpStatus: number | null = null): ReportLine => ({ kind, id, outcome: "failed", httpStatus, serviceId: null, url: null, error });

  // Unreadable lines first: they are failures whatever happens next.
  progress();
  for (const p of feed.problems) finish(failed(p.kind === "broker" || p.kind === "listing" ? p.kind : null, p.id, p.error));

  // An ID given twice is refused the second time (which body would win is anyone's guess).
  const seen = new Map<string, number>();
  const unique: FeedRecord[] = [];
  for (const record of feed.records) {
    const key = `${record.kind}\u0000${record.id}`;
    const first = seen.get(key);
    if (first !== undefined) finish(failed(record.kind, record.id, `line ${record.line}: ${record.kind} ${record.id} is already given on line ${first}; each record may appear once`));
    else {
      seen.set(key, record.line);
      unique.push(record);
    }
  }

  /**
   * Local validation, just before the record's turn to be sent (so it overlaps other records' requests); a
   * record refused here is never sent. The JSON text made here serves the size check, the hash and the request.
   */
  const prepare = (record: FeedRecord): Prepared | null => {
    const json = JSON.stringify(record.body);
    const idProblem = opts.validator.validateId(record.kind, record.id);
    const problems = idProblem ? [idProblem] : opts.validator.validateBody(record.kind, record.body, json);
    if (problems.length === 0) return { kind: record.kind, id: record.id, body: record.body, json };
    finish(failed(record.kind, record.id, `line ${record.line}: ${problemsSentence(problems)}`));
    return null;
  };

  let interrupted = false;
  /**
   * A listing sent once without an answer and never acknowledged: the API may have created it or not. Archiving
   * one it does not have would be refused as an incomplete create, so ask first; if the question fails, archive
   * (the PUT reports what happens).
   */
  const existsInApi = async (id: string): Promise<boolean> => {
    try {
      await opts.client.getListing(id, { signal: opts.signal });
      return true;
    } catch (err) {
      return !(err instanceof PssApiError && err.status === 404);
    }
  };
  /**
   * Dry run: brokers of this feed the API does not have yet (their dry run said wouldCreate), by external ID.
   * Nothing is stored in a dry run, so a listing naming one would be refused with 404 "Broker not found", while
   * the real sync writes the broker first. Such a listing is dry-run with that broker inline instead: the API
   * then checks it as the real PUT will see it. The broker's own paths (broker.…) are left out of its answer.
   */
  const brokersToCreate = new Map<string, Record<string, unknown>>();
  const asTheRealSyncSeesIt = (record: Prepared): { json: string; inlined: boolean } => {
    const ref = record.body.brokerExternalId;
    const broker = typeof ref === "string" && record.body.broker === undefined ? brokersToCreate.get(ref) : undefined;
    if (!broker) return { json: record.json, inlined: false };
    return { json: JSON.stringify({ ...record.body, broker: { ...broker, externalBrokerId: ref } }), inlined: true };
  };

  const send = async (record: Prepared, archive = false): Promise<void> => {
    const hash = contentHash(record.json);
    const known = opts.checkpoint.get(record.kind, record.id);
    const extra = archive ? { archive: true as const } : {};
    if (opts.resume && acknowledged(known, hash) && !archive) {
      finish({ kind: record.kind, id: record.id, outcome: "skipped", httpStatus: null, serviceId: known!.serviceId, url: known!.url, error: null });
      return;
    }
    let intended = false;
    try {
      const callOpts = { dryRun: opts.dryRun ?? false, signal: opts.signal, json: record.json };
      if (opts.dryRun) {
        if (record.kind === "broker") {
          const r = await opts.client.putBroker(record.id, record.body as BrokerBody, { ...callOpts, dryRun: true });
          if (r.outcome === "wouldCreate") brokersToCreate.set(record.id, record.body);
          const outcome: Outcome = r.outcome === "wouldCreate" ? "created" : r.outcome === "wouldUpdate" ? "updated" : "unchanged";
          finish({ kind: record.kind, id: record.id, outcome, httpStatus: r.httpStatus, serviceId: known?.serviceId ?? null, url: known?.url ?? null, error: null, changedPaths: r.changedPaths, ...extra, ...quality("broker", r) });
          return;
        }
        const { json, inlined } = archive ? { json: record.json, inlined: false } : asTheRealSyncSeesIt(record);
        const r = await opts.client.putListing(record.id, record.body as ListingBody, { ...callOpts, json, dryRun: true });
        const changedPaths = inlined ? r.changedPaths.filter((p) => !p.startsWith("broker.")) : r.changedPaths;
        // With the broker inline, a listing changed only through its broker's fields is unchanged itself.
        const outcome: Outcome = r.outcome === "wouldCreate" ? "created" : r.outcome === "wouldUpdate" && changedPaths.length > 0 ? "updated" : "unchanged";
        finish({ kind: record.kind, id: record.id, outcome, httpStatus: r.httpStatus, serviceId: known?.serviceId ?? null, url: known?.url ?? null, error: null, changedPaths, ...extra, ...(archive ? {} : quality("listing", r)) });
        return;
      }
      // Journalled before it goes out: if no answer ever comes, the record stays in doubt and is sent again,
      // whatever the API holds meanwhile.
      opts.checkpoint.intend(record.kind, record.id, hash);
      intended = true;
      if (opts.signal?.aborted) throw opts.signal.reason;
      const r = record.kind === "broker" ? await opts.client.putBroker(record.id, record.body as BrokerBody, callOpts) : await opts.client.putListing(record.id, record.body as ListingBody, callOpts);
      const serviceId = "serviceBrokerId" in r ? r.serviceBrokerId : r.serviceListingId;
      const url = "serviceProfileUrl" in r ? r.serviceProfileUrl : r.serviceListingUrl;
      // The API answers 200 both for a change and for an identical repeat (stored as a no-op). A 200 for the
      // very content the API already acknowledged for this ID (checkpoint) is an identical repeat: unchanged.
      const outcome: Outcome = r.created ? "created" : acknowledged(known, hash) ? "unchanged" : "updated";
      opts.checkpoint.record({ kind: record.kind, id: record.id, hash, serviceId, url, ...(archive ? { archived: true } : {}) });
      finish({ kind: record.kind, id: record.id, outcome, httpStatus: r.httpStatus, serviceId, url, error: null, ...extra, ...(archive ? {} : quality(record.kind, r)) });
    } catch (err) {
      if (opts.signal?.aborted) {
        interrupted = true;
        return; // not finished: no report line; the record stays in doubt in the checkpoint, --resume sends it again
      }
      // The API refused the content itself: nothing was stored, the API still has what it had. Any other failure
      // (no answer, 5xx, a 408/429 or refused key on the last attempt after an attempt whose answer never came)
      // leaves the record in doubt.
      if (intended && err instanceof PssApiError && refusesContent(err.status)) opts.checkpoint.refused(record.kind, record.id);
      if (err instanceof PssApiError) {
        const details = err.details.length > 1 ? problemsSentence(err.details) : err.error;
        finish({ ...failed(record.kind, record.id, `${details}${err.requestId ? ` (request ${err.requestId})` : ""}`, err.status), ...extra });
      } else finish({ ...failed(record.kind, record.id, err instanceof PssError ? err.message : `unexpected failure: ${String(err)}`), ...extra });
    }
  };

  const pool = async (items: (FeedRecord | Prepared)[], archive = false) => {
    let next = 0;
    const worker = async () => {
      while (next < items.length && !opts.signal?.aborted) {
        const item = items[next++]!;
        const prepared = "json" in item ? item : prepare(item);
        if (prepared) await send(prepared, archive);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
    if (opts.signal?.aborted) interrupted = true;
  };

  phase = "brokers";
  progress();
  await pool(unique.filter((r) => r.kind === "broker"));
  phase = "listings";
  progress();
  await pool(unique.filter((r) => r.kind === "listing"));

  let archived = 0;
  let archiveSkipped: string | null = null;
  if (opts.archiveMissing && !interrupted) {
    const present = new Set(feed.records.filter((r) => r.kind === "listing").map((r) => r.id));
    const candidates = [...opts.checkpoint.entries()].filter((e) => e.kind === "listing" && !e.archived && !present.has(e.id));
    const missing: string[] = [];
    for (const e of candidates) {
      if (e.hash === null && !opts.dryRun && !(await existsInApi(e.id))) opts.checkpoint.forget("listing", e.id);
      else missing.push(e.id);
    }
    if (feed.problems.length) archiveSkipped = `${feed.problems.length} feed line(s) could not be read, so which listings are missing is not known`;
    else if (missing.length === 0) archiveSkipped = null;
    else if (!opts.dryRun && !(await opts.archiveMissing.confirm(missing))) archiveSkipped = "not confirmed";
    else {
      phase = "archiving";
      total += missing.length;
      progress();
      const before = counts.failed;
      await pool(missing.map((id) => ({ kind: "listing" as const, id, body: { ...ARCHIVE_BODY }, json: JSON.stringify(ARCHIVE_BODY) })), true);
      archived = missing.length - (counts.failed - before);
    }
  }

  phase = "done";
  progress();
  return { ...counts, total, warnings, archived, archiveSkipped, durationMs: Math.round(performance.now() - started), requests: requests(), dryRun: opts.dryRun ?? false, interrupted };
}
