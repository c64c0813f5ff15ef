// One measured phase of API writes, for the per-row figures beside its throughput: the rows it wrote (counted in
// the database), the WAL bytes and the CPU by process it cost, including the outbox relay and the feed sequencer
// catching up after the load stops (as they must, for each written row, in production).
import type postgres from "postgres";
import { cpuBetween, sampleCpu } from "./cpu-meter.ts";
import { walMark, walSince, type WalUsed } from "./wal-meter.ts";

const DRAIN_TIMEOUT_MS = 60_000;
/** The tables a listing write, its relaying and its sequencing change. */
const WRITE_TABLES = [
  "listings",
  "listing_photos",
  "listing_status_history",
  "listing_history",
  "outbox",
  "partner_feed",
  "partner_feed_heads",
];

/**
 * Before a WAL-measured phase, API or fair baseline: vacuum what earlier phases left (the removed baseline rows,
 * updated rows' old versions), so autovacuum does not log that work inside the phase, then a CHECKPOINT, so
 * every phase starts with the same full-page-image cost (the first change to a page after one logs all 8 KB).
 */
export async function quiesce(sql: postgres.Sql): Promise<void> {
  await sql.unsafe(`VACUUM ${WRITE_TABLES.join(", ")}`);
  await sql`CHECKPOINT`;
}

/** Outbox rows still to relay or to sequence for the change feed (up to 10,000 of each: enough to wait on). */
export async function eventsPending(sql: postgres.Sql): Promise<number> {
  const [row] = await sql`
    SELECT (SELECT count(*) FROM (SELECT 1 FROM outbox WHERE published_at IS NULL AND set_aside_at IS NULL LIMIT 10000) x)::int
         + (SELECT count(*) FROM (SELECT 1 FROM outbox WHERE feed_pending LIMIT 10000) y)::int AS n`;
  return row!.n as number;
}

/** Waits until at most `atMost` events are left to relay or sequence; returns the time waited and what was left. */
export async function drainEvents(sql: postgres.Sql, atMost = 0): Promise<{ ms: number; left: number }> {
  const started = performance.now();
  let left = await eventsPending(sql);
  while (left > atMost && performance.now() - started < DRAIN_TIMEOUT_MS) {
    await Bun.sleep(100);
    left = await eventsPending(sql);
  }
  return { ms: Math.round(performance.now() - started), left };
}

/**
 * Writes stored under a prefix: a create leaves version 1 and every update adds one (a no-op adds nothing), so
 * the difference of this sum across a phase counts the rows it wrote, requests still in flight when the load
 * generator stopped included.
 */
export async function writesUnder(sql: postgres.Sql, partnerId: string, prefix: string): Promise<number> {
  const [row] = await sql`
    SELECT coalesce(sum(version), 0)::float8 AS n FROM listings WHERE partner_id = ${partnerId} AND mode = 'live' AND external_id LIKE ${`${prefix}-%`}`;
  return row!.n as number;
}

export interface PhaseResult {
  /** Rows written in the phase. */
  rows: number;
  wal: WalUsed;
  /** CPU seconds per named process and per PostgreSQL application (cpu-meter.ts). */
  cpu: Record<string, number>;
  /** How long the relay and the sequencer took to catch up after the load, and what they had not (0 = all). */
  drainMs: number;
  undrained: number;
}

/**
 * Starts a phase: the previous phase's events are relayed and sequenced first, then `quiesce`; then WAL, CPU and
 * writes are marked. `end` waits for this phase's events to be relayed and sequenced before reading them again.
 */
export async function beginPhase(
  sql: postgres.Sql,
  opts: { partnerId: string; prefix: string; procs: Record<string, number> },
): Promise<{ end(): Promise<PhaseResult> }> {
  await drainEvents(sql);
  await quiesce(sql);
  const writes0 = await writesUnder(sql, opts.partnerId, opts.prefix);
  const cpu0 = await sampleCpu(sql, opts.procs);
  const wal0 = await walMark(sql);
  return {
    async end() {
      const drained = await drainEvents(sql);
      const wal = await walSince(sql, wal0);
      const cpu = cpuBetween(cpu0, await sampleCpu(sql, opts.procs));
      const rows = (await writesUnder(sql, opts.partnerId, opts.prefix)) - writes0;
      return { rows, wal, cpu, drainMs: drained.ms, undrained: drained.left };
    },
  };
}
