// The request log writer alone (services/api/src/request-log/request-log.ts): CPU time to record and write a number
// of PUT-like records in the batches a busy API flushes, in this process and in PostgreSQL (the backends of its own
// client, read from /proc). Steady on a shared machine: it measures only the work the log adds to each request.
import postgres from "postgres";
import { silentLogger } from "@pss/service-kit";
import { createRequestLog } from "../../services/api/src/request-log/request-log.ts";
import { cpuSecondsOf } from "./cpu-meter.ts";

export async function requestLogWriterCost(opts: {
  databaseUrl: string;
  partnerId: string;
  keyId: string;
  records: number;
  batch: number;
}): Promise<{ apiMicrosPerRecord: number; pgMicrosPerRecord: number }> {
  const app = `bench-request-log-${process.pid}`;
  const sql = postgres(opts.databaseUrl, { max: 1, onnotice: () => {}, connection: { application_name: app } });
  try {
    const log = createRequestLog({ sql, logger: silentLogger, batchSize: opts.batch, maxBuffered: opts.records + 1 });
    await sql`SELECT 1`;
    const [backend] = await sql`SELECT pg_backend_pid() AS pid`;
    const pgPid = Number(backend!.pid);
    const pgBefore = cpuSecondsOf(pgPid);
    const before = process.cpuUsage();
    for (let done = 0; done < opts.records; done += opts.batch) {
      for (let i = 0; i < opts.batch; i++)
        log.record({
          at: Date.now(),
          partnerId: opts.partnerId,
          mode: "live",
          keyId: opts.keyId,
          method: "PUT",
          path: `/partner/v1/listings/bench-writer-${done + i}`,
          status: 201,
          durationMs: 4.2,
          requestId: crypto.randomUUID(),
          error: null,
        });
      await log.flush();
    }
    const used = process.cpuUsage(before);
    const pgSeconds = cpuSecondsOf(pgPid) - pgBefore;
    await sql`DELETE FROM api_request_log WHERE partner_id = ${opts.partnerId}::uuid AND path LIKE '/partner/v1/listings/bench-writer-%'`;
    return {
      apiMicrosPerRecord: (used.user + used.system) / opts.records,
      pgMicrosPerRecord: (1e6 * pgSeconds) / opts.records,
    };
  } finally {
    await sql.end();
  }
}
