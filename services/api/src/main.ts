// Composition root: the only place that creates clients and wires dependencies; runService (service-kit) boots,
// checks and stops them.
import { topicSpecs } from "@pss/contracts";
import {
  createFeedSequencer,
  createHttpMetrics,
  createEventProducer,
  createKafka,
  createPostgres,
  createReadinessMonitor,
  createRedis,
  redisReadiness,
  createSecretBox,
  numberFeedPass,
  serveTraced,
  pingKafka,
  runService,
  type HealthRoutesOptions,
  type ReadinessCheck,
  type ServiceKit,
} from "@pss/service-kit";
import { createAuthenticator, createPreviewLinks, createRateLimiter, serverOptions } from "@pss/http-kit";
import { createApp } from "./app.ts";
import { attachWorkerLink } from "./cluster/api-cluster.ts";
import { startApiPrimary } from "./cluster/api-primary.ts";
import { loadConfig, type ApiConfig } from "./config.ts";
import { createLeadCountCache } from "./lead-counts/lead-count-cache.ts";
import { createRelayMetrics, registerOutboxGauges } from "./outbox/outbox-metrics.ts";
import { createOutboxRelay } from "./outbox/outbox-relay.ts";
import { createOutboxStatus } from "./outbox/outbox-status.ts";
import { createRequestLog } from "./request-log/request-log.ts";
import { createRetentionJob } from "./test-mode/retention-job.ts";
import { createWriteGroupMetrics } from "./listings/write-group-metrics.ts";

await runService({
  name: "api",
  loadConfig,
  logFields: (config) => (config.workerIndex !== null ? { worker: config.workerIndex } : undefined),
  build: (kit) => (kit.config.workers > 1 && kit.config.workerIndex === null ? startPrimary(kit) : buildApi(kit)),
});

// API_WORKERS > 1: this process is the primary; it runs the workers (this same file, API_WORKER_INDEX set) and
// the health port, and nothing else.
function startPrimary({ config, logger }: ServiceKit<ApiConfig>): null {
  startApiPrimary({
    workers: config.workers,
    healthPort: config.healthPort,
    logger,
    spawnWorker: (index, ipc) =>
      Bun.spawn([process.execPath, ...process.argv.slice(1)], {
        // One relay is enough: the first worker runs it when it is enabled at all.
        env: {
          ...process.env,
          API_WORKER_INDEX: String(index),
          ...(index > 0 ? { OUTBOX_RELAY_ENABLED: "false" } : {}),
        },
        ipc,
        stdin: "ignore",
        stdout: "inherit",
        stderr: "inherit",
      }),
  });
  return null; // runs until its shutdown exits the process
}

function buildApi({ config, logger, metrics, isStopping, booted, exit, tracing }: ServiceKit<ApiConfig>) {
  const isWorker = config.workerIndex !== null;
  // A short connect timeout: while PostgreSQL is unreachable, requests answer 503 within ~2 s instead of hanging.
  const sql = createPostgres(config.postgres, {
    applicationName: "pss-api",
    genericPlans: true,
    connectTimeoutSeconds: 1.5,
  });
  const redis = createRedis(config.redis);
  redis.on("error", (err) => logger.warn("redis unavailable", { err: err.message }));
  const kafka = createKafka(config.kafka, logger);
  // Idempotent, acks=all, one request in flight (per-partition order); consumers drop repeats by aggregate version.
  // A new producer after a failed round (outbox-relay.ts says why).
  const relay = createOutboxRelay(
    {
      sql,
      producer: () => createEventProducer(kafka),
      logger,
      metrics: config.outboxRelayEnabled ? createRelayMetrics(metrics) : undefined,
      tracing,
      // The feed sequencer runs beside an enabled relay: each round's delete and a numbering pass commit together.
      feedPass: (tx) => numberFeedPass(tx),
    },
    config.outboxRelay,
  );
  // The outbox gauges read shared state: one process reports them (workers' metrics are summed by the primary).
  if (!isWorker || config.workerIndex === 0) registerOutboxGauges(metrics, createOutboxStatus({ sql }), logger);

  // The partner portal's view of every partner request: appended in memory, written in batches off the request path.
  const requestLog = config.requestLog ? createRequestLog({ sql, logger }) : undefined;
  requestLog?.start();

  // Ready when PostgreSQL answers. Redis and Kafka outages degrade the API (no shared caches or rate limits;
  // events wait in the outbox) but it keeps serving, so they are reported without failing readiness.
  const readiness: Record<string, ReadinessCheck | null> = {
    postgres: { run: () => sql`SELECT 1`, everyMs: 1000, timeoutMs: 1500 },
    redis: { run: redisReadiness(redis), required: false, everyMs: 0 },
  };
  // A Kafka probe opens an admin connection: run it at most every 15 s, and only where this process relays.
  readiness.kafka = config.outboxRelayEnabled
    ? { run: () => pingKafka(kafka), required: false, everyMs: 15_000, timeoutMs: 2000 }
    : null;

  // Deletes old test records and old change history; every instance runs it, one at a time works (lease "retention-job").
  const retention = createRetentionJob({
    sql,
    logger,
    testDataRetentionDays: config.sandbox.testDataRetentionDays,
    historyRetentionDays: config.sandbox.historyRetentionDays,
    idempotencyRetentionHours: config.idempotencyRetentionHours,
    intervalMs: config.sandbox.retentionIntervalSeconds * 1000,
  });

  // Numbers the change feed (GET /partner/v1/events). It runs where the relay runs (this process when its relay is
  // on, else relay-main.ts), off the request path; any number of instances is safe (one pass at a time works).
  const feedSequencer = createFeedSequencer({ sql, logger }, { retentionDays: config.feedRetentionDays });

  const app = createApp({
    sql,
    logger,
    authenticator: createAuthenticator({ sql, redis, logger }),
    partnerRateLimiter: createRateLimiter({
      redis,
      logger,
      limit: config.rateLimitPerMinute,
      windowSeconds: 60,
      name: "partner",
    }),
    publicBaseUrl: config.publicBaseUrl,
    maxBodyBytes: config.maxBodyBytes,
    httpMetrics: createHttpMetrics(metrics),
    leadCounts: { countCache: createLeadCountCache({ redis, logger, ttlSeconds: config.leadCountCacheSeconds }) },
    webhookSecrets: createSecretBox(config.webhookSecretKey),
    webhookResendDailyBudget: config.webhookResendDailyBudget,
    idempotencyRetentionHours: config.idempotencyRetentionHours,
    requestLog,
    writeGroupConcurrency: config.writeGroupConcurrency,
    writeGroupStats: createWriteGroupMetrics(metrics),
    previews: createPreviewLinks({
      sql,
      publicBaseUrl: config.publicBaseUrl,
      secret: config.sandbox.previewLinkSecret,
      ttlSeconds: config.sandbox.previewLinkTtlSeconds,
    }),
    tracing,
  });
  // Every request in its server span (service-kit tracing-http.ts), whatever the app does with it.
  serveTraced(app, tracing, {
    port: config.port,
    hostname: "0.0.0.0",
    // Workers share the port; the kernel spreads connections over them.
    reusePort: isWorker,
    ...serverOptions((err) =>
      logger.error("unhandled error outside the application", { err: err instanceof Error ? err : String(err) }),
    ),
  });
  // Probes and Prometheus use a port of their own: the public port serves neither /readyz nor /metrics. A worker
  // answers its primary, which serves that port for all workers.
  logger.info("listening", {
    port: config.port,
    healthPort: isWorker ? null : config.healthPort,
    publicBaseUrl: config.publicBaseUrl,
  });

  function startWorkerLink(opts: HealthRoutesOptions) {
    const monitor = createReadinessMonitor({
      checks: opts.checks,
      onFailure: opts.onCheckFailure,
      onSuccess: opts.onCheckSuccess,
    });
    const link = attachWorkerLink({
      answer: async (kind) => {
        if (kind === "metrics") return metrics.snapshot();
        if (kind === "readiness") return isStopping() ? { ready: false, checks: {}, degraded: [] } : monitor.report();
        throw new Error(`unknown question '${kind}'`);
      },
      // The primary was killed without stopping us: leave the port to its successor.
      onPrimaryGone: () => void exit("primary gone"),
    });
    return { port: null, stop: async () => link.detach() };
  }

  retention.start();
  if (config.outboxRelayEnabled) feedSequencer.start();
  return {
    clients: { sql, kafka, redis },
    checks: readiness,
    // Topics are the relay's business: created in the background (retrying through a Kafka outage) before it
    // starts, so the API boots and serves whether or not Kafka answers, and creates nothing when its relay is off.
    ...(config.outboxRelayEnabled
      ? { topics: topicSpecs(config.kafka.topics), start: { what: "start relaying", run: () => relay.start() } }
      : {}),
    health: isWorker ? startWorkerLink : undefined,
    stopIntake: () => app.stop(),
    stop: {
      "stop retention job": () => retention.stop(),
      "stop feed sequencer": () => feedSequencer.stop(),
      "flush request log": async () => requestLog?.stop(),
      "stop outbox relay": async () => {
        await booted;
        await relay.stop();
      },
    },
  };
}
