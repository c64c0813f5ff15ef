// CPU time spent by the processes a scenario cares about (the API, the relay, this database's PostgreSQL
// backends), read from /proc: on a shared 2-core machine CPU per row is far steadier than rows per second.
import { readFileSync } from "node:fs";
import type postgres from "postgres";

const TICKS_PER_SECOND = 100;

/** utime + stime of a process in seconds, 0 when it is gone. */
export function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** PostgreSQL backends of the current database, by application name. */
async function backends(sql: postgres.Sql): Promise<{ pid: number; app: string }[]> {
  const rows = await sql`SELECT pid, application_name AS app FROM pg_stat_activity WHERE datname = current_database()`;
  return rows.map((r) => ({ pid: Number(r.pid), app: String(r.app) }));
}

export interface CpuSample {
  at: number;
  procs: Record<string, number>;
  pg: Map<number, { app: string; cpu: number }>;
}

export async function sampleCpu(sql: postgres.Sql, procs: Record<string, number>): Promise<CpuSample> {
  const pg = new Map<number, { app: string; cpu: number }>();
  for (const b of await backends(sql)) pg.set(b.pid, { app: b.app, cpu: cpuSecondsOf(b.pid) });
  return {
    at: performance.now(),
    procs: Object.fromEntries(Object.entries(procs).map(([name, pid]) => [name, cpuSecondsOf(pid)])),
    pg,
  };
}

/** CPU seconds used between two samples: per named process, and PostgreSQL backends grouped by application. */
export function cpuBetween(a: CpuSample, b: CpuSample): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, cpu] of Object.entries(b.procs)) out[name] = cpu - (a.procs[name] ?? 0);
  for (const [pid, { app, cpu }] of b.pg) {
    const key = `pg:${app || "client"}`;
    out[key] = (out[key] ?? 0) + cpu - (a.pg.get(pid)?.cpu ?? 0);
  }
  return out;
}
