// Self-healing for the search index: an event lost on its way (an outbox row marked published that Kafka never
// kept, a dead-lettered batch, a document deleted by hand) would otherwise leave a listing 'pending' or missing
// from search forever. Every RECONCILE_INTERVAL_MS the active reconciler:
//   1. finds listings whose index state stayed 'pending' longer than RECONCILE_PENDING_AFTER_MS, or whose
//      recorded indexed version is not the stored version (partial index listings_index_unsettled, 0007);
//   2. audits a page of listings recorded as indexed against the index, moving through the table run by run:
//      a visible listing without a document, or with an older document version, is repaired too;
//   3. repairs them by indexing the listing as PostgreSQL holds it now, exactly as the indexer builds it, with
//      external versions (external_gte: the same version may be written again), then records the index state.
//      Idempotent: a repair racing the indexer's own event ends in the same document, and an older version never
//      replaces a newer one.
// One reconciler is active across replicas: it holds the lease "reconciler:<alias>" (leader-lease.ts, a row in
// leader_leases that works through a transaction-pooling PgBouncer), renewed in the background; the others stand
// by and take over when it stops (at once) or dies (within the lease's 30 s). Repairs are counted in
// indexer_reconciler_repairs_total{reason}.
import type { Client } from "@opensearch-project/opensearch";
import {
  Counter,
  createHeldLease,
  createLeaderLease,
  createPeriodicJob,
  Gauge,
  type Logger,
  type Metrics,
} from "@pss/service-kit";
import type postgres from "postgres";
import { loadListingsByIds, recordIndexStates, type StoredListingState } from "../indexing/listing-store.ts";
import { publicIndexAction } from "../indexing/public-index-rule.ts";
import type { DescriptionRewriter } from "../rewriting/description-rewriter.ts";
import { buyerDescriptions } from "../rewriting/buyer-descriptions.ts";
import { writeBulk, type IndexOperation } from "../search-index/bulk-writer.ts";
import { createGazetteer } from "@pss/geo";
import { toSearchDocument, type ListingSource, type Locate } from "../search-index/search-document.ts";

export const REPAIR_REASONS = ["pending_timeout", "version_mismatch", "missing_document", "stale_document"] as const;
export type RepairReason = (typeof REPAIR_REASONS)[number];

const BATCH = 500;
/** How long a reconciler that died keeps the others standing by at most. */
const LEASE_MS = 30_000;

export interface ReconcilerMetrics {
  repaired(reason: RepairReason, n: number): void;
  run(outcome: "completed" | "failed"): void;
  active(on: boolean): void;
}

export function createReconcilerMetrics(metrics: Metrics): ReconcilerMetrics {
  const registers = [metrics.registry];
  const repairs = new Counter({
    name: "indexer_reconciler_repairs_total",
    help: "Listings the reconciler indexed again, by reason: pending_timeout, version_mismatch, missing_document, stale_document",
    labelNames: ["reason"],
    registers,
  });
  for (const reason of REPAIR_REASONS) repairs.inc({ reason }, 0);
  const runs = new Counter({
    name: "indexer_reconciler_runs_total",
    help: "Reconciler runs by outcome (completed, failed)",
    labelNames: ["outcome"],
    registers,
  });
  for (const outcome of ["completed", "failed"]) runs.inc({ outcome }, 0);
  const active = new Gauge({
    name: "indexer_reconciler_active",
    help: "1 while this process is the active reconciler (holds its lock), else 0",
    registers,
  });
  return {
    repaired: (reason, n) => repairs.inc({ reason }, n),
    run: (outcome) => runs.inc({ outcome }),
    active: (on) => active.set(on ? 1 : 0),
  };
}

export interface ReconcilerDeps {
  sql: postgres.Sql;
  opensearch: Client;
  alias: string;
  rewriter: DescriptionRewriter;
  logger: Logger;
  /** A listing still 'pending' this long after its last write is repaired. */
  pendingAfterMs: number;
  /** Time between runs; 0: never runs on its own (runOnce still works). */
  intervalMs: number;
  metrics?: ReconcilerMetrics;
  /** Only these partners' listings (tests sharing one database); absent = all. */
  partnerIds?: string[];
  /** Places a listing for distance search (main.ts's gazetteer); absent: one of this reconciler's own. */
  locate?: Locate;
}

export interface ReconcileResult {
  repaired: Record<RepairReason, number>;
  /** Listings OpenSearch refused; they stay unsettled and are tried again next run. */
  rejected: number;
}

export interface Reconciler {
  start(): void;
  stop(): Promise<void>;
  /** One run if this instance is (or becomes) the active one; null when another instance is active. */
  runOnce(): Promise<ReconcileResult | null>;
  isActive(): boolean;
}

export function createReconciler(deps: ReconcilerDeps): Reconciler {
  const locate = deps.locate ?? createGazetteer().locate;
  const { sql, logger } = deps;
  const log = logger.child({ component: "reconciler", alias: deps.alias });
  const scoped = (column: postgres.PendingQuery<postgres.Row[]>) =>
    deps.partnerIds ? sql`AND ${column} = ANY(${deps.partnerIds}::uuid[])` : sql``;
  const lease = createLeaderLease({ sql, name: `reconciler:${deps.alias}`, ttlMs: LEASE_MS });
  /** Where the audit of indexed listings goes on next run. */
  let auditAfterId = 0;
  let inRun: Promise<unknown> = Promise.resolve();

  /** Holds (or takes) the lease, renewed in the background from then on; lead() is false when another instance holds it. */
  const held = createHeldLease({
    lease,
    logger: log,
    name: "reconciler",
    fields: () => ({ pendingAfterMs: deps.pendingAfterMs, intervalMs: deps.intervalMs }),
    onActive: (on) => deps.metrics?.active(on),
  });

  async function unsettled(): Promise<{ id: number; reason: RepairReason }[]> {
    const before = new Date(Date.now() - deps.pendingAfterMs);
    // Both conditions imply listings_index_unsettled's predicate: read from that partial index.
    const rows = await sql<{ id: string; pending: boolean }[]>`
      SELECT id::text AS id, index_state = 'pending' AS pending FROM listings l
      WHERE (index_state = 'pending' OR indexed_version IS DISTINCT FROM version) AND updated_at < ${before} ${scoped(sql`l.partner_id`)}
      ORDER BY updated_at LIMIT ${BATCH}`;
    return rows.map((r) => ({ id: Number(r.id), reason: r.pending ? "pending_timeout" : "version_mismatch" }));
  }

  /**
   * The next page of listings recorded as indexed, compared with the documents the index holds. Test listings are
   * left out: recorded as indexed, they never have a document (public-index-rule.ts).
   */
  async function audit(): Promise<{ id: number; reason: RepairReason }[]> {
    const rows = await sql<{ id: string; version: number }[]>`
      SELECT id::text AS id, indexed_version AS version FROM listings l
      WHERE id > ${auditAfterId} AND index_state = 'indexed' AND indexed_version = version AND l.mode = 'live' ${scoped(sql`l.partner_id`)}
      ORDER BY id LIMIT ${BATCH}`;
    auditAfterId = rows.length < BATCH ? 0 : Number(rows[rows.length - 1]!.id);
    if (rows.length === 0) return [];
    const res = await deps.opensearch.mget({ index: deps.alias, body: { ids: rows.map((r) => r.id) }, _source: false });
    const docs = (res.body as { docs: { _id: string; found?: boolean; _version?: number }[] }).docs;
    const found = new Map(docs.map((d) => [d._id, d]));
    const out: { id: number; reason: RepairReason }[] = [];
    for (const r of rows) {
      const doc = found.get(r.id);
      if (!doc?.found) out.push({ id: Number(r.id), reason: "missing_document" });
      else if ((doc._version ?? 0) < r.version) out.push({ id: Number(r.id), reason: "stale_document" });
    }
    return out;
  }

  function descriptions(entries: { source: ListingSource; state: StoredListingState }[]) {
    return buyerDescriptions({ sql, rewriter: deps.rewriter }, entries);
  }

  async function repair(found: { id: number; reason: RepairReason }[]): Promise<ReconcileResult> {
    const result: ReconcileResult = {
      repaired: { pending_timeout: 0, version_mismatch: 0, missing_document: 0, stale_document: 0 },
      rejected: 0,
    };
    if (found.length === 0) return result;
    const reasons = new Map(found.map((f) => [f.id, f.reason]));
    const entries = await loadListingsByIds(sql, [...reasons.keys()]);
    const decided = entries.map((e) => ({
      ...e,
      action: publicIndexAction({ status: e.source.status, mode: e.state.mode }),
    }));
    const texts = await descriptions(decided.filter((e) => e.action.kind === "index"));
    const ops: IndexOperation[] = [];
    const states: { id: number; version: number; state: "indexed" | "removed" }[] = [];
    for (const { source, state, action } of decided) {
      if (action.kind === "index")
        ops.push({
          kind: "index",
          id: source.id,
          version: source.version,
          versionType: "external_gte",
          document: toSearchDocument(source, state, texts.get(source.id) ?? null, locate),
        });
      else if (action.kind === "delete") ops.push({ kind: "delete", id: source.id, version: source.version });
      else {
        // A test listing: its state is settled without touching the index.
        states.push({ id: source.id, version: source.version, state: action.state });
        result.repaired[reasons.get(source.id)!]++;
      }
    }
    for (const { op, result: outcome, reason } of await writeBulk(deps.opensearch, deps.alias, ops)) {
      if (outcome === "rejected") {
        result.rejected++;
        log.warn("reconciler: listing refused by the index", { listingId: op.id, reason });
        continue;
      }
      states.push({ id: op.id, version: op.version, state: op.kind === "index" ? "indexed" : "removed" });
      // Superseded: the index already holds this version or a newer one (the indexer got there first).
      if (outcome === "applied") result.repaired[reasons.get(op.id)!]++;
    }
    await recordIndexStates(sql, states);
    for (const reason of REPAIR_REASONS)
      if (result.repaired[reason] > 0) deps.metrics?.repaired(reason, result.repaired[reason]);
    if (states.length > 0)
      log.warn("reconciler repaired listings", {
        ...result.repaired,
        listingIds: states.slice(0, 20).map((s) => s.id),
      });
    return result;
  }

  async function runOnce(): Promise<ReconcileResult | null> {
    if (!(await held.lead())) return null;
    try {
      const pending = await unsettled();
      const audited = await audit();
      const seen = new Set(pending.map((p) => p.id));
      const result = await repair([...pending, ...audited.filter((a) => !seen.has(a.id))]);
      deps.metrics?.run("completed");
      return result;
    } catch (err) {
      deps.metrics?.run("failed");
      throw err;
    }
  }

  const job = createPeriodicJob({
    name: "reconciler",
    logger: log,
    tick: () => {
      const once = runOnce();
      inRun = once.catch(() => {});
      return once.then(() => {});
    },
    intervalMs: deps.intervalMs,
    failureMessage: "reconciler run failed; trying again next interval",
  });

  return {
    start() {
      if (deps.intervalMs > 0) job.start();
    },
    async stop() {
      await job.stop();
      await inRun;
      await held.release();
    },
    runOnce: () => {
      const once = runOnce();
      inRun = once.catch(() => {});
      return once;
    },
    isActive: () => lease.isHeld(),
  };
}
