// Batch upserts (POST /partner/v1/listings/batch, 100 items a request) against single PUTs of the same rows in the
// same run, and against the fair batched baseline (the same rows, photos, status and change history and outbox
// rows written by a PostgreSQL client in batches of 100, bench/lib/fair-batch-baseline.ts). Creates and updates;
// per row: WAL bytes against the baseline's, and the PostgreSQL CPU of the relay and the feed sequencer.
import type { BenchContext } from "../lib/context.ts";
import { fairBatchBaseline } from "../lib/fair-batch-baseline.ts";
import { removeBaselineRows } from "../lib/fair-baseline.ts";
import { runLoad, startApiProcess, type LoadSpec } from "../lib/processes.ts";
import { round, type Row } from "../lib/result.ts";
import { cpuBetween, sampleCpu, type CpuSample } from "../lib/cpu-meter.ts";
import { meets, targetText } from "../lib/targets.ts";
import { describeWal, walPerRow } from "../lib/wal-meter.ts";
import { beginPhase, quiesce, type PhaseResult } from "../lib/write-phase.ts";

const BATCH_SIZE = 100;
/** Batches in flight at once (API and baseline alike); single PUTs use the usual 32 connections. */
const BATCH_CONNECTIONS = 4;
const SINGLE_CONNECTIONS = 32;
const UPDATE_KEYS = 2000;
/** The relay process's connections (relay and feed sequencer): relay-main.ts names them so. */
const RELAY_PG = "pg:pss-outbox-relay";

/**
 * Where the CPU of a measurement went, per row written (µs): the API process, the relay process (relay and feed
 * sequencer), and this database's PostgreSQL backends by client. On 2 shared cores this says why a ratio misses
 * (work the fair baseline does not do: relaying to Kafka, sequencing the feed) better than rows/s alone.
 */
const API_RUN = {
  api: "API",
  relay: "relay+sequencer",
  "pg:pss-api": "PostgreSQL for the API",
  [RELAY_PG]: "PostgreSQL for relay+sequencer",
};
const BASELINE_RUN = { client: "the client (this process)", "pg:postgres.js": "PostgreSQL for the client" };

function cpuPerRow(used: Record<string, number>, rows: number, names: Record<string, string>): string {
  const parts = Object.entries(names)
    .filter(([k]) => (used[k] ?? 0) > 0)
    .map(([k, label]) => `${label} ${Math.round((used[k]! * 1e6) / Math.max(1, rows))}`);
  return `CPU µs per row: ${parts.join(", ")}`;
}

/**
 * The relay's and sequencer's PostgreSQL time per row (µs), NaN when it cannot be told: no relay backend seen, or
 * the API's own backends read as idle (PostgreSQL's processes not readable here), so 0 never passes by accident.
 */
function relayPgMicros(phase: PhaseResult): number {
  const api = phase.cpu["pg:pss-api"] ?? 0;
  const relay = phase.cpu[RELAY_PG];
  if (relay === undefined || api <= 0 || phase.rows <= 0) return Number.NaN;
  return Math.round((relay * 1e6) / phase.rows);
}

async function measureFair(ctx: BenchContext, args: Parameters<typeof fairBatchBaseline>[0]) {
  await quiesce(ctx.sql);
  const cpu0: CpuSample = await sampleCpu(ctx.sql, { client: process.pid });
  const result = await fairBatchBaseline(args);
  const used = cpuBetween(cpu0, await sampleCpu(ctx.sql, { client: process.pid }));
  return { ...result, cpu: cpuPerRow(used, result.rows, BASELINE_RUN) };
}

export async function batchWrites(ctx: BenchContext): Promise<Row[]> {
  const rows: Row[] = [];
  const prefix = `batch-${Date.now().toString(36)}`;
  const partnerId = ctx.partner.partnerId;

  // Baselines first, with no API (and so no relay) running.
  const common = {
    sql: ctx.sql,
    partnerId,
    brokerExternalId: ctx.brokerExternalId,
    concurrency: BATCH_CONNECTIONS,
    durationSeconds: ctx.durationSeconds,
    batchSize: BATCH_SIZE,
  };
  const fairCreate = await measureFair(ctx, { ...common, prefix: `${prefix}-fair`, mode: "create" });
  const [{ n: fairRows }] =
    (await ctx.sql`SELECT count(*)::int AS n FROM listings WHERE partner_id = ${partnerId} AND external_id LIKE ${`${prefix}-fair-%`}`) as unknown as [
      { n: number },
    ];
  const fairUpdate = await measureFair(ctx, {
    ...common,
    prefix: `${prefix}-fair`,
    mode: "update",
    existing: Math.min(fairRows, UPDATE_KEYS),
  });
  await removeBaselineRows(ctx.sql, partnerId, `${prefix}-fair`);

  const api = await startApiProcess({ ...ctx.urls, DATABASE_POOL_SIZE: String(SINGLE_CONNECTIONS) });
  const procs = { api: api.pid, ...(api.relayPid ? { relay: api.relayPid } : {}) };
  try {
    const base = { url: api.url, key: ctx.partner.apiKey, broker: ctx.brokerExternalId };
    const batchLoad = { ...base, connections: BATCH_CONNECTIONS, batchSize: BATCH_SIZE };
    const singleLoad = { ...base, connections: SINGLE_CONNECTIONS };
    await runLoad({
      ...batchLoad,
      mode: "batch-new",
      prefix: `${prefix}-warm`,
      offset: 0,
      durationSeconds: ctx.warmupSeconds,
    });
    await runLoad({
      ...singleLoad,
      mode: "new",
      prefix: `${prefix}-warm`,
      offset: 10_000_000,
      durationSeconds: ctx.warmupSeconds,
    });
    /** A measured load: its rows, WAL and CPU counted until the relay and the sequencer have caught up. */
    const measured = async (spec: Omit<LoadSpec, "durationSeconds">, keys: string) => {
      const phase = await beginPhase(ctx.sql, { partnerId, prefix: keys, procs });
      const load = await runLoad({ ...spec, durationSeconds: ctx.durationSeconds });
      return { load, phase: await phase.end() };
    };

    const single = await measured(
      { ...singleLoad, mode: "new", prefix: `${prefix}-single`, offset: 0 },
      `${prefix}-single`,
    );
    const batch = await measured(
      { ...batchLoad, mode: "batch-new", prefix: `${prefix}-batch`, offset: 0 },
      `${prefix}-batch`,
    );
    rows.push(
      ...kindRows({
        kind: "creates",
        single,
        batch,
        fair: fairCreate,
        fairLabel: `same rows from a PostgreSQL client in batches of ${BATCH_SIZE}, ${BATCH_CONNECTIONS} writers`,
      }),
    );

    const existing = Math.min(single.load.sent, UPDATE_KEYS);
    const singleUpdate = await measured(
      { ...singleLoad, mode: "update", prefix: `${prefix}-single`, existing },
      `${prefix}-single`,
    );
    const batchUpdate = await measured(
      { ...batchLoad, mode: "batch-update", prefix: `${prefix}-single`, existing, salt: 7_000_000 },
      `${prefix}-single`,
    );
    rows.push(
      ...kindRows({
        kind: "updates",
        single: singleUpdate,
        batch: batchUpdate,
        fair: fairUpdate,
        fairLabel: `same reads and writes from a PostgreSQL client in batches of ${BATCH_SIZE}, ${BATCH_CONNECTIONS} writers`,
      }),
    );
  } finally {
    await api.stop();
  }
  return rows;
}

type Measured = { load: Awaited<ReturnType<typeof runLoad>>; phase: PhaseResult };

/** The four rows of creates or of updates: against single PUTs, against the fair baseline, WAL, relay time. */
function kindRows(m: {
  kind: "creates" | "updates";
  single: Measured;
  batch: Measured;
  fair: Awaited<ReturnType<typeof measureFair>>;
  fairLabel: string;
}): Row[] {
  const { kind, single, batch, fair } = m;
  const batchRows = batch.load.rps * BATCH_SIZE;
  const failed = batch.load.itemFailures ?? 0;
  const clean = failed === 0 && batch.load.non2xx === 0 && single.load.non2xx === 0;
  const vsSingle = batchRows / single.load.rps;
  const vsFair = batchRows / fair.rowsPerSecond;
  const apiWal = walPerRow(batch.phase.wal, batch.phase.rows);
  const fairWal = walPerRow(fair.wal, fair.rows);
  const relayMicros = relayPgMicros(batch.phase);
  const caughtUpAll = batch.phase.undrained === 0;
  const caughtUp = `the relay and the sequencer caught up, ${round(batch.phase.drainMs / 1000)} s after the load${batch.phase.undrained ? ` (${batch.phase.undrained} events still pending at the time-out: counted short)` : ""}`;
  const name = `Batch ${kind} (${BATCH_SIZE} a request)`;
  return [
    {
      scenario: `${name} vs single PUT ${kind}, same run`,
      figure: round(batchRows),
      unit: "rows/s",
      baseline: round(single.load.rps),
      baselineLabel: `single PUT ${kind}, rows/s`,
      ratio: round(vsSingle, 2),
      target: targetText("batchVsSinglePut"),
      pass: meets("batchVsSinglePut", vsSingle) && clean,
      targetId: "batchVsSinglePut",
      targetPart: kind,
      notes: `batch p50 ${batch.load.p50} ms, p99 ${batch.load.p99} ms per request of ${BATCH_SIZE} (${BATCH_CONNECTIONS} in flight); single PUT ${round(single.load.rps)} req/s at ${SINGLE_CONNECTIONS} connections; failed items ${failed}, non-2xx ${batch.load.non2xx + single.load.non2xx}`,
    },
    {
      scenario: `${name} vs the fair batched baseline, relay and sequencer running`,
      figure: round(batchRows),
      unit: "rows/s",
      baseline: round(fair.rowsPerSecond),
      baselineLabel: m.fairLabel,
      ratio: round(vsFair, 2),
      target: targetText(kind === "creates" ? "batchCreatesVsFair" : "batchUpdatesVsFair"),
      pass: meets(kind === "creates" ? "batchCreatesVsFair" : "batchUpdatesVsFair", vsFair) && clean,
      targetId: kind === "creates" ? "batchCreatesVsFair" : "batchUpdatesVsFair",
      notes: `baseline p50 ${round(fair.p50)} ms, p99 ${round(fair.p99)} ms per batch; API run (until the relay and sequencer caught up): ${cpuPerRow(batch.phase.cpu, batch.phase.rows, API_RUN)}; baseline: ${fair.cpu}`,
    },
    {
      scenario: `WAL bytes per batch-${kind === "creates" ? "created" : "updated"} listing vs the fair batched baseline's`,
      figure: apiWal,
      unit: "B/row",
      baseline: fairWal,
      baselineLabel: "fair batched baseline, no API running",
      ratio: round(apiWal / fairWal, 2),
      target: kind === "creates" ? targetText("batchCreateWalVsFair") : "reported",
      // Events left unrelayed at the time-out leave WAL uncounted: then the figure is low and cannot pass.
      pass: kind === "creates" ? meets("batchCreateWalVsFair", apiWal / fairWal) && caughtUpAll : null,
      ...(kind === "creates" ? { targetId: "batchCreateWalVsFair" as const } : {}),
      notes: `API: ${describeWal(batch.phase.wal, batch.phase.rows)}, with the relay's and sequencer's WAL (read when ${caughtUp}); fair baseline: ${describeWal(fair.wal, fair.rows)}; single PUT ${kind} in this run: ${describeWal(single.phase.wal, single.phase.rows)}`,
    },
    {
      scenario: `relay + sequencer PostgreSQL time per row, batch ${kind}`,
      figure: relayMicros,
      unit: "µs/row",
      target: targetText("relayPgTimePerRow"),
      pass: meets("relayPgTimePerRow", relayMicros) && caughtUpAll,
      targetId: "relayPgTimePerRow",
      targetPart: kind,
      notes: `CPU of the relay process's PostgreSQL backends (application_name pss-outbox-relay), read from /proc, for ${batch.phase.rows} rows written, from the load's start until ${caughtUp}; ${cpuPerRow(batch.phase.cpu, batch.phase.rows, API_RUN)}`,
    },
  ];
}
