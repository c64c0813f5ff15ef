// Batch upserts (POST /partner/v1/listings/batch, 100 items a request) against single PUTs of the same rows in the
// same run, and against the fair batched baseline (the same rows, photos, status and change history and outbox
// rows written by a PostgreSQL client in batches of 100, bench/lib/fair-batch-baseline.ts). Creates and updates.
import type { BenchContext } from "../lib/context.ts";
import { fairBatchBaseline } from "../lib/fair-batch-baseline.ts";
import { removeBaselineRows } from "../lib/fair-baseline.ts";
import { runLoad, startApiProcess } from "../lib/processes.ts";
import { round, type Row } from "../lib/result.ts";
import { cpuBetween, sampleCpu, type CpuSample } from "../lib/cpu-meter.ts";

const BATCH_SIZE = 100;
/** Batches in flight at once (API and baseline alike); single PUTs use the usual 32 connections. */
const BATCH_CONNECTIONS = 4;
const SINGLE_CONNECTIONS = 32;
const UPDATE_KEYS = 2000;
/** After a batch run, the relay's backlog is drained before CPU is read, so the relay's share is all counted. */
const RELAY_DRAIN_MS = 2000;

/**
 * Where the CPU of a measurement went, per row written (µs): the API process, the relay process (relay and feed
 * sequencer), and this database's PostgreSQL backends by client. On 2 shared cores this says why a ratio misses
 * (work the fair baseline does not do: relaying to Kafka, sequencing the feed) better than rows/s alone.
 */
const API_RUN = {
  api: "API",
  relay: "relay+sequencer",
  "pg:pss-api": "PostgreSQL for the API",
  "pg:pss-outbox-relay": "PostgreSQL for relay+sequencer",
};
const BASELINE_RUN = { client: "the client (this process)", "pg:postgres.js": "PostgreSQL for the client" };

function cpuPerRow(a: CpuSample, b: CpuSample, rows: number, names: Record<string, string>): string {
  const used = cpuBetween(a, b);
  const parts = Object.entries(names)
    .filter(([k]) => (used[k] ?? 0) > 0)
    .map(([k, label]) => `${label} ${Math.round((used[k]! * 1e6) / Math.max(1, rows))}`);
  return `CPU µs per row: ${parts.join(", ")}`;
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
  let cpu0 = await sampleCpu(ctx.sql, { client: process.pid });
  const fairCreate = await fairBatchBaseline({ ...common, prefix: `${prefix}-fair`, mode: "create" });
  const fairCreateCpu = cpuPerRow(
    cpu0,
    await sampleCpu(ctx.sql, { client: process.pid }),
    fairCreate.rowsPerSecond * ctx.durationSeconds,
    BASELINE_RUN,
  );
  const [{ n: fairRows }] =
    (await ctx.sql`SELECT count(*)::int AS n FROM listings WHERE partner_id = ${partnerId} AND external_id LIKE ${`${prefix}-fair-%`}`) as unknown as [
      { n: number },
    ];
  cpu0 = await sampleCpu(ctx.sql, { client: process.pid });
  const fairUpdate = await fairBatchBaseline({
    ...common,
    prefix: `${prefix}-fair`,
    mode: "update",
    existing: Math.min(fairRows, UPDATE_KEYS),
  });
  const fairUpdateCpu = cpuPerRow(
    cpu0,
    await sampleCpu(ctx.sql, { client: process.pid }),
    fairUpdate.rowsPerSecond * ctx.durationSeconds,
    BASELINE_RUN,
  );
  await removeBaselineRows(ctx.sql, partnerId, `${prefix}-fair`);

  const api = await startApiProcess({ ...ctx.urls, DATABASE_POOL_SIZE: String(SINGLE_CONNECTIONS) });
  const procs = { api: api.pid, ...(api.relayPid ? { relay: api.relayPid } : {}) };
  try {
    const base = { url: api.url, key: ctx.partner.apiKey, broker: ctx.brokerExternalId };
    await runLoad({
      ...base,
      mode: "batch-new",
      connections: BATCH_CONNECTIONS,
      batchSize: BATCH_SIZE,
      prefix: `${prefix}-warm`,
      offset: 0,
      durationSeconds: ctx.warmupSeconds,
    });
    await runLoad({
      ...base,
      mode: "new",
      connections: SINGLE_CONNECTIONS,
      prefix: `${prefix}-warm`,
      offset: 10_000_000,
      durationSeconds: ctx.warmupSeconds,
    });

    const single = await runLoad({
      ...base,
      mode: "new",
      connections: SINGLE_CONNECTIONS,
      prefix: `${prefix}-single`,
      offset: 0,
      durationSeconds: ctx.durationSeconds,
    });
    cpu0 = await sampleCpu(ctx.sql, procs);
    const batch = await runLoad({
      ...base,
      mode: "batch-new",
      connections: BATCH_CONNECTIONS,
      batchSize: BATCH_SIZE,
      prefix: `${prefix}-batch`,
      offset: 0,
      durationSeconds: ctx.durationSeconds,
    });
    const batchRows = batch.rps * BATCH_SIZE;
    await Bun.sleep(RELAY_DRAIN_MS);
    const batchCpu = cpuPerRow(cpu0, await sampleCpu(ctx.sql, procs), batchRows * ctx.durationSeconds, API_RUN);
    const createNotes = `batch p50 ${batch.p50} ms, p99 ${batch.p99} ms per request of ${BATCH_SIZE} (${BATCH_CONNECTIONS} in flight); single PUT ${round(single.rps)} req/s at ${SINGLE_CONNECTIONS} connections; failed items ${batch.itemFailures ?? 0}, non-2xx ${batch.non2xx + single.non2xx}`;
    rows.push(
      {
        scenario: `Batch creates (${BATCH_SIZE} a request) vs single PUT creates, same run`,
        figure: round(batchRows),
        unit: "rows/s",
        baseline: round(single.rps),
        baselineLabel: "single PUT creates, rows/s",
        ratio: round(batchRows / single.rps, 2),
        target: "≥ 5",
        pass: batchRows / single.rps >= 5 && (batch.itemFailures ?? 0) === 0 && batch.non2xx === 0,
        notes: createNotes,
      },
      {
        scenario: `Batch creates (${BATCH_SIZE} a request) vs the fair batched baseline`,
        figure: round(batchRows),
        unit: "rows/s",
        baseline: round(fairCreate.rowsPerSecond),
        baselineLabel: `same rows from a PostgreSQL client in batches of ${BATCH_SIZE}, ${BATCH_CONNECTIONS} writers`,
        ratio: round(batchRows / fairCreate.rowsPerSecond, 2),
        target: "≥ 0.7",
        pass: batchRows / fairCreate.rowsPerSecond >= 0.7,
        notes: `baseline p50 ${round(fairCreate.p50)} ms, p99 ${round(fairCreate.p99)} ms per batch; API run: ${batchCpu}; baseline: ${fairCreateCpu}`,
      },
    );

    const existing = Math.min(single.sent, UPDATE_KEYS);
    const singleUpdate = await runLoad({
      ...base,
      mode: "update",
      connections: SINGLE_CONNECTIONS,
      prefix: `${prefix}-single`,
      existing,
      durationSeconds: ctx.durationSeconds,
    });
    cpu0 = await sampleCpu(ctx.sql, procs);
    const batchUpdate = await runLoad({
      ...base,
      mode: "batch-update",
      connections: BATCH_CONNECTIONS,
      batchSize: BATCH_SIZE,
      prefix: `${prefix}-single`,
      existing,
      salt: 7_000_000,
      durationSeconds: ctx.durationSeconds,
    });
    const updateRows = batchUpdate.rps * BATCH_SIZE;
    await Bun.sleep(RELAY_DRAIN_MS);
    const updateCpu = cpuPerRow(cpu0, await sampleCpu(ctx.sql, procs), updateRows * ctx.durationSeconds, API_RUN);
    rows.push(
      {
        scenario: `Batch updates (${BATCH_SIZE} a request) vs single PUT updates, same run`,
        figure: round(updateRows),
        unit: "rows/s",
        baseline: round(singleUpdate.rps),
        baselineLabel: "single PUT updates, rows/s",
        ratio: round(updateRows / singleUpdate.rps, 2),
        target: "≥ 5",
        pass: updateRows / singleUpdate.rps >= 5 && (batchUpdate.itemFailures ?? 0) === 0 && batchUpdate.non2xx === 0,
        notes: `batch p50 ${batchUpdate.p50} ms, p99 ${batchUpdate.p99} ms per request; failed items ${batchUpdate.itemFailures ?? 0}, non-2xx ${batchUpdate.non2xx + singleUpdate.non2xx}`,
      },
      {
        scenario: `Batch updates (${BATCH_SIZE} a request) vs the fair batched baseline`,
        figure: round(updateRows),
        unit: "rows/s",
        baseline: round(fairUpdate.rowsPerSecond),
        baselineLabel: `same reads and writes from a PostgreSQL client in batches of ${BATCH_SIZE}, ${BATCH_CONNECTIONS} writers`,
        ratio: round(updateRows / fairUpdate.rowsPerSecond, 2),
        target: "≥ 0.7",
        pass: updateRows / fairUpdate.rowsPerSecond >= 0.7,
        notes: `baseline p50 ${round(fairUpdate.p50)} ms, p99 ${round(fairUpdate.p99)} ms per batch; API run: ${updateCpu}; baseline: ${fairUpdateCpu}`,
      },
    );
  } finally {
    await api.stop();
  }
  return rows;
}
