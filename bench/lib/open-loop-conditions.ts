// What an open-loop row of partner-writes runs in: a settled database before it (the previous measurement's wake
// gone), and what the API's backends waited on while it ran.
import type { BenchContext } from "./context.ts";
import { round } from "./result.ts";
import { drainEvents } from "./write-phase.ts";

/**
 * Lets the previous measurement's wake pass before an open-loop row: the relay and the feed sequencer catch up
 * (a saturated or overloaded run leaves thousands of events), dirty pages are flushed, then a short idle pause.
 * Without it, a low-load row that follows an overload (25 % updates right after 75 % creates) measured the
 * aftermath (p99 143 ms at 25 % against 11 ms at 50 %), not the load it names.
 */
export async function settle(ctx: BenchContext): Promise<number> {
  const started = performance.now();
  await drainEvents(ctx.sql, 50);
  await ctx.sql`CHECKPOINT`;
  await Bun.sleep(2000);
  return Math.round(performance.now() - started);
}

/**
 * What the API's own database connections waited on while a measurement ran, sampled every 50 ms: the share of
 * samples with a backend waiting for the WAL (commit flush) says whether a tail is the disk's fsync.
 */
export function sampleWaits(ctx: BenchContext): () => Promise<string> {
  const counts = new Map<string, number>();
  let samples = 0;
  let on = true;
  const loop = (async () => {
    while (on) {
      const rows = await ctx.sql`
        SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') AS w, count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'pss-api' AND state = 'active' GROUP BY 1`.catch(
        () => [],
      );
      samples++;
      for (const r of rows) counts.set(r.w as string, (counts.get(r.w as string) ?? 0) + (r.n as number));
      await Bun.sleep(50);
    }
  })();
  return async () => {
    on = false;
    await loop;
    const top = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 4);
    return `API backends' waits (active backends per 50 ms sample, ${samples} samples): ${top.map(([w, n]) => `${w} ${round(n / Math.max(1, samples), 2)}`).join(", ") || "none"}`;
  };
}
