// One sync run: local validation, brokers before the listings that reference them, in batches (POST …/batch,
// each record answered as its own PUT) or one PUT per record, bounded concurrency under the pacer's budget, the
// checkpoint (skip what the API already has; every record is journalled before the request carrying it goes
// out, so a record without an answer, alone or in a batch, is sent again on --resume), and optionally ARCHIVED
// for listings that dropped out of a full feed. Every record ends as exactly one report line.
import { PssApiError, PssError } from "../client/errors.ts";
import { MAX_BATCH_ITEMS, type PartnerClient } from "../client/partner-client.ts";
import type { BrokerBody, ListingBody } from "../types.ts";
import { problemsSentence, type RecordValidator } from "../validation/record-validator.ts";
import { acknowledged, type Checkpoint, type CheckpointEntry } from "./checkpoint.ts";
import { contentHash } from "./content-hash.ts";
import type { Feed, FeedRecord } from "./feed.ts";
import type { Outcome, ReportLine, ReportSink } from "./report.ts";
import type { UntypedJson } from "../untyped-json.ts";

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
  /**
   * Records per request (default 100, at most 500): brokers and listings go in batches (POST …/batch), each
   * record answered as its own PUT. 1 sends one PUT per record.
   */
  batchSize?: number;
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

export const DEFAULT_BATCH_SIZE = 100;
/** Sends of a batch item answered 429 or 503 (the key's budget, contention), the first included. */
const BATCH_ITEM_ATTEMPTS = 6;

const pause = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });

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
  const quality = (
    kind: "broker" | "listing",
    answer: { warnings?: { path: string; code: string; message: string }[]; qualityScore?: number },
  ) => {
    const list = answer.warnings ?? [];
    const tally = kind === "listing" ? warnings.listings : warnings.brokers;
    for (const code of new Set(list.map((w) => w.code))) tally[code] = (tally[code] ?? 0) + 1;
    return {
      ...(list.length ? { warnings: list } : {}),
      ...(answer.qualityScore !== undefined ? { qualityScore: answer.qualityScore } : {}),
    };
  };
  const finish = (line: ReportLine) => {
    counts[line.outcome] += 1;
    done += 1;
    opts.report.write(line);
    progress();
  };
  const failed = (
    kind: ReportLine["kind"],
    id: string | null,
    error: string,
    httpStatus: number | null = null,
  ): ReportLine => ({ kind, id, outcome: "failed", httpStatus, serviceId: null, url: null, error });

  // Unreadable lines first: they are failures whatever happens next.
  progress();
  for (const p of feed.problems)
    finish(failed(p.kind === "broker" || p.kind === "listing" ? p.kind : null, p.id, p.error));

  // An ID given twice is refused the second time (which body would win is anyone's guess).
  const seen = new Map<string, number>();
  const unique: FeedRecord[] = [];
  for (const record of feed.records) {
    const key = `${record.kind}\u0000${record.id}`;
    const first = seen.get(key);
    if (first !== undefined)
      finish(
        failed(
          record.kind,
          record.id,
          `line ${record.line}: ${record.kind} ${record.id} is already given on line ${first}; each record may appear once`,
        ),
      );
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

  /** What the API answered for one record: its PUT's status and body, or why it failed. */
  type Answer =
    | { httpStatus: number; body: UntypedJson; changed?: boolean }
    | { failure: string; httpStatus: number | null };

  /**
   * The record's report line (and checkpoint entry) from its answer: one rule for single PUTs and batch items.
   * `known`: its checkpoint entry as it was before this send's intent; `intended`: the record was journalled as
   * sent (not in a dry run).
   */
  const settle = (
    record: Prepared,
    answer: Answer,
    archive: boolean,
    inlined: boolean,
    known: CheckpointEntry | undefined,
    intended: boolean,
  ) => {
    const extra = archive ? { archive: true as const } : {};
    if ("failure" in answer) {
      // The API refused the content itself: nothing was stored, the API still has what it had. Any other failure
      // (no answer, 5xx, a 408/429 or refused key on the last attempt after an attempt whose answer never came)
      // leaves the record in doubt.
      if (intended && answer.httpStatus !== null && refusesContent(answer.httpStatus))
        opts.checkpoint.refused(record.kind, record.id);
      return finish({ ...failed(record.kind, record.id, answer.failure, answer.httpStatus), ...extra });
    }
    const hash = contentHash(record.json);
    const r = answer.body;
    const warned = archive ? {} : quality(record.kind, r);
    if (opts.dryRun) {
      if (record.kind === "broker" && r.outcome === "wouldCreate") brokersToCreate.set(record.id, record.body);
      const changedPaths: string[] = inlined
        ? r.changedPaths.filter((p: string) => !p.startsWith("broker."))
        : r.changedPaths;
      // With the broker inline, a listing changed only through its broker's fields is unchanged itself.
      const outcome: Outcome =
        r.outcome === "wouldCreate"
          ? "created"
          : r.outcome === "wouldUpdate" && changedPaths.length > 0
            ? "updated"
            : "unchanged";
      return finish({
        kind: record.kind,
        id: record.id,
        outcome,
        httpStatus: answer.httpStatus,
        serviceId: known?.serviceId ?? null,
        url: known?.url ?? null,
        error: null,
        changedPaths,
        ...extra,
        ...warned,
      });
    }
    const serviceId = record.kind === "broker" ? r.serviceBrokerId : r.serviceListingId;
    const url = record.kind === "broker" ? r.serviceProfileUrl : r.serviceListingUrl;
    // The API answers 200 both for a change and for an identical repeat (stored as a no-op). A batch says which
    // (changed); for a single PUT, a 200 for the very content the API already acknowledged for this ID
    // (checkpoint) is an identical repeat: unchanged.
    const unchanged = answer.changed === undefined ? acknowledged(known, hash) : !answer.changed;
    const outcome: Outcome = answer.httpStatus === 201 ? "created" : unchanged ? "unchanged" : "updated";
    opts.checkpoint.record({
      kind: record.kind,
      id: record.id,
      hash,
      serviceId,
      url,
      ...(archive ? { archived: true } : {}),
    });
    finish({
      kind: record.kind,
      id: record.id,
      outcome,
      httpStatus: answer.httpStatus,
      serviceId,
      url,
      error: null,
      ...extra,
      ...warned,
    });
  };

  const failureOf = (err: unknown): Answer => {
    if (err instanceof PssApiError) {
      const details = err.details.length > 1 ? problemsSentence(err.details) : err.error;
      return { failure: `${details}${err.requestId ? ` (request ${err.requestId})` : ""}`, httpStatus: err.status };
    }
    return { failure: err instanceof PssError ? err.message : `unexpected failure: ${String(err)}`, httpStatus: null };
  };

  /** Resume: a record whose content the API acknowledged last time is not sent (never one sent without an answer). */
  const skippedByResume = (record: Prepared, archive: boolean): boolean => {
    if (!opts.resume || archive) return false;
    const known = opts.checkpoint.get(record.kind, record.id);
    if (!acknowledged(known, contentHash(record.json))) return false;
    finish({
      kind: record.kind,
      id: record.id,
      outcome: "skipped",
      httpStatus: null,
      serviceId: known!.serviceId,
      url: known!.url,
      error: null,
    });
    return true;
  };

  /**
   * Journalled before the request goes out: if no answer ever comes, the record stays in doubt and is sent again,
   * whatever the API holds meanwhile. A dry run stores nothing and journals nothing.
   */
  const intend = (record: Prepared): boolean => {
    if (opts.dryRun) return false;
    opts.checkpoint.intend(record.kind, record.id, contentHash(record.json));
    return true;
  };

  const send = async (record: Prepared, archive = false): Promise<void> => {
    if (skippedByResume(record, archive)) return;
    const { json, inlined } =
      opts.dryRun && record.kind === "listing" && !archive
        ? asTheRealSyncSeesIt(record)
        : { json: record.json, inlined: false };
    let answer: Answer;
    const known = opts.checkpoint.get(record.kind, record.id);
    let intended = false;
    try {
      const callOpts = { dryRun: opts.dryRun ?? false, signal: opts.signal, json };
      intended = intend(record);
      if (opts.signal?.aborted) throw opts.signal.reason;
      const r =
        record.kind === "broker"
          ? await opts.client.putBroker(record.id, record.body as BrokerBody, callOpts)
          : await opts.client.putListing(record.id, record.body as ListingBody, callOpts);
      answer = { httpStatus: r.httpStatus, body: r as UntypedJson };
    } catch (err) {
      if (opts.signal?.aborted) {
        interrupted = true;
        return; // not finished: no report line; the record stays in doubt in the checkpoint, --resume sends it again
      }
      answer = failureOf(err);
    }
    settle(record, answer, archive, inlined, known, intended);
  };

  /**
   * A batch of records of one kind in one request. Every item is journalled before the request goes out; each
   * item's result is its PUT's answer; items answered 429 or 503 (the key's budget, a write that kept colliding)
   * are sent again in a later batch, after a pause. A batch without an answer leaves all its items in doubt.
   */
  const sendBatch = async (records: Prepared[], archive = false): Promise<void> => {
    let pending = records.filter((r) => !skippedByResume(r, archive));
    for (let attempt = 1; pending.length > 0; attempt++) {
      const kind = pending[0]!.kind;
      const shaped = pending.map((r) => {
        const seen =
          opts.dryRun && kind === "listing" && !archive ? asTheRealSyncSeesIt(r) : { json: r.json, inlined: false };
        return {
          record: r,
          body: seen.inlined ? JSON.parse(seen.json) : r.body,
          inlined: seen.inlined,
          known: opts.checkpoint.get(r.kind, r.id),
        };
      });
      let intended = false;
      let results: { httpStatus: number; changed: boolean; body: UntypedJson }[];
      let requestId: string | null = null;
      try {
        for (const s of shaped) intended = intend(s.record);
        if (opts.signal?.aborted) throw opts.signal.reason;
        const batchOpts = { dryRun: opts.dryRun ?? false, signal: opts.signal };
        const answer =
          kind === "broker"
            ? await opts.client.brokers.upsertMany(
                shaped.map((s) => ({ externalBrokerId: s.record.id, broker: s.body as BrokerBody })),
                batchOpts,
              )
            : await opts.client.listings.upsertMany(
                shaped.map((s) => ({ externalListingId: s.record.id, listing: s.body as ListingBody })),
                batchOpts,
              );
        results = answer.results as typeof results;
        requestId = answer.requestId;
      } catch (err) {
        if (opts.signal?.aborted) {
          interrupted = true;
          return; // not finished: the batch's records stay in doubt in the checkpoint, --resume sends them again
        }
        // The batch as a whole failed: a refused batch (400/413) wrote nothing; no answer leaves every item in doubt.
        const failure = failureOf(err);
        for (const s of shaped) settle(s.record, failure, archive, false, s.known, intended);
        return;
      }
      const again: Prepared[] = [];
      shaped.forEach((s, i) => {
        const r = results[i]!;
        if ((r.httpStatus === 429 || r.httpStatus === 503) && attempt < BATCH_ITEM_ATTEMPTS)
          return void again.push(s.record);
        if (r.httpStatus >= 300) {
          const details: { path: string; message: string }[] = r.body.details ?? [];
          const sentence = details.length > 1 ? problemsSentence(details) : String(r.body.error);
          return settle(
            s.record,
            { failure: `${sentence}${requestId ? ` (request ${requestId})` : ""}`, httpStatus: r.httpStatus },
            archive,
            false,
            s.known,
            intended,
          );
        }
        settle(
          s.record,
          { httpStatus: r.httpStatus, body: r.body, changed: opts.dryRun ? undefined : r.changed },
          archive,
          s.inlined,
          s.known,
          intended,
        );
      });
      pending = again;
      if (pending.length) await pause(Math.min(30_000, 1000 * 2 ** (attempt - 1)), opts.signal);
      if (opts.signal?.aborted) {
        interrupted = true;
        return;
      }
    }
  };

  const batchSize = Math.max(1, Math.min(MAX_BATCH_ITEMS, opts.batchSize ?? DEFAULT_BATCH_SIZE));
  const pool = async (items: (FeedRecord | Prepared)[], archive = false) => {
    let next = 0;
    const worker = async () => {
      while (next < items.length && !opts.signal?.aborted) {
        if (batchSize === 1) {
          const item = items[next++]!;
          const prepared = "json" in item ? item : prepare(item);
          if (prepared) await send(prepared, archive);
          continue;
        }
        // The next batchSize records (those refused locally are reported, not sent).
        const chunk: Prepared[] = [];
        while (chunk.length < batchSize && next < items.length) {
          const item = items[next++]!;
          const prepared = "json" in item ? item : prepare(item);
          if (prepared) chunk.push(prepared);
        }
        if (chunk.length) await sendBatch(chunk, archive);
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
    const candidates = [...opts.checkpoint.entries()].filter(
      (e) => e.kind === "listing" && !e.archived && !present.has(e.id),
    );
    const missing: string[] = [];
    for (const e of candidates) {
      if (e.hash === null && !opts.dryRun && !(await existsInApi(e.id))) opts.checkpoint.forget("listing", e.id);
      else missing.push(e.id);
    }
    if (feed.problems.length)
      archiveSkipped = `${feed.problems.length} feed line(s) could not be read, so which listings are missing is not known`;
    else if (missing.length === 0) archiveSkipped = null;
    else if (!opts.dryRun && !(await opts.archiveMissing.confirm(missing))) archiveSkipped = "not confirmed";
    else {
      phase = "archiving";
      total += missing.length;
      progress();
      const before = counts.failed;
      await pool(
        missing.map((id) => ({
          kind: "listing" as const,
          id,
          body: { ...ARCHIVE_BODY },
          json: JSON.stringify(ARCHIVE_BODY),
        })),
        true,
      );
      archived = missing.length - (counts.failed - before);
    }
  }

  phase = "done";
  progress();
  return {
    ...counts,
    total,
    warnings,
    archived,
    archiveSkipped,
    durationMs: Math.round(performance.now() - started),
    requests: requests(),
    dryRun: opts.dryRun ?? false,
    interrupted,
  };
}
