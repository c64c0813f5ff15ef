// The primary of API_WORKERS > 1: starts the workers, serves the health port for all of them (ready when every
// live worker is ready; /metrics combined from theirs) and stops them on SIGTERM. It opens no connections.
import type { Subprocess } from "bun";
import {
  aggregateMetrics,
  createShutdown,
  startHealthServer,
  type Logger,
  type MetricsSnapshot,
  type ReadinessReport,
} from "@pss/service-kit";
import { createApiCluster } from "./api-cluster.ts";

/** Worker shutdown is bounded by service-kit's 25 s; the primary waits that long, plus a little. */
const WORKER_STOP_TIMEOUT_MS = 27_000;

export function startApiPrimary(deps: {
  workers: number;
  healthPort: number;
  logger: Logger;
  spawnWorker: (index: number, ipc: (message: unknown) => void) => Subprocess;
}): void {
  const { logger } = deps;
  const cluster = createApiCluster({ count: deps.workers, logger, spawn: deps.spawnWorker });
  let stopping = false;
  cluster.start();

  const health = startHealthServer({
    service: "api",
    port: deps.healthPort,
    isStopping: () => stopping,
    checks: {
      workers: {
        run: async () => {
          const reports = (await cluster.ask("readiness", 1500)) as ReadinessReport[];
          if (reports.length < deps.workers) throw new Error(`${reports.length} of ${deps.workers} workers answered`);
          const notReady = reports.filter((r) => !r.ready).length;
          if (notReady > 0) throw new Error(`${notReady} of ${deps.workers} workers not ready`);
        },
        everyMs: 1000,
        timeoutMs: 2000,
      },
    },
    metrics: aggregateMetrics(async () => (await cluster.ask("metrics", 2000)) as MetricsSnapshot[]),
    onCheckFailure: (name, err) =>
      logger.debug("readiness check failing", { check: name, err: (err as Error).message }),
  });
  logger.info("api primary started", { workers: deps.workers, healthPort: health.port });

  const shutdown = createShutdown(logger, { stepTimeoutMs: WORKER_STOP_TIMEOUT_MS + 1000 });
  shutdown.register("stop api workers", async () => {
    stopping = true;
    await cluster.stop(WORKER_STOP_TIMEOUT_MS);
  });
  shutdown.register("stop health endpoint", () => health.stop());
  shutdown.listen();
}
