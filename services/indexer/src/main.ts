// Composition root: the only place that creates clients, wires dependencies and handles shutdown.
import { topicSpecs } from "@pss/contracts";
import {
  loadConfigOrExit,
  startHealthServer,
  createKafka,
  createConsumerMetrics,
  createLogger,
  createMetrics,
  createOpenSearch,
  createPostgres,
  createShutdown,
  ensureTopics,
  installCrashGuard,
  pingKafka,
  retryUntilDone,
} from "@pss/service-kit";
import { loadConfig } from "./config.ts";
import { createIndexer } from "./indexer.ts";
import { registerIndexingGauges } from "./indexer-metrics.ts";
import { createReconciler, createReconcilerMetrics } from "./reconcile/reconciler.ts";
import { createDeterministicRewriter } from "./rewriting/description-rewriter.ts";
import { createLlmRewriter } from "./rewriting/llm-rewriter.ts";

const config = loadConfigOrExit("indexer", loadConfig);

const logger = createLogger({ service: "indexer", level: config.logLevel });
installCrashGuard(logger);
const sql = createPostgres(config.postgres, { applicationName: "pss-indexer" });
const opensearch = createOpenSearch(config.opensearch);
const kafka = createKafka(config.kafka, logger);

const rewriter = config.llmRewriter ? createLlmRewriter({ ...config.llmRewriter, logger }) : createDeterministicRewriter();
const metrics = createMetrics({ service: "indexer" });
registerIndexingGauges({ metrics, sql, logger });
const consumerMetrics = createConsumerMetrics(metrics, { onError: (err) => logger.debug("consumer metrics unavailable", { err: (err as Error).message }) });
const indexer = createIndexer({ kafka, sql, opensearch, alias: config.searchAlias, groupId: config.groupId, rewriter, logger, metrics: consumerMetrics, session: config.kafka.consumer });
// One active across replicas (the lease "reconciler:<alias>" in leader_leases); the others stand by.
const reconciler = createReconciler({
  sql,
  opensearch,
  alias: config.searchAlias,
  rewriter,
  logger,
  ...config.reconcile,
  metrics: createReconcilerMetrics(metrics),
});

let stopping = false;
const health = startHealthServer({
  service: "indexer",
  port: config.healthPort,
  checks: {
    postgres: () => sql`SELECT 1`,
    // An admin connection per probe is not free: at most one every 10 s.
    kafka: { run: () => pingKafka(kafka), everyMs: 10_000, timeoutMs: 2000 },
    consumer: async () => {
      if (!indexer.isRunning()) throw new Error("not consuming");
    },
    opensearch: async () => {
      const res = await opensearch.cluster.health({}, { requestTimeout: 1500, maxRetries: 0 });
      if ((res.body as { status?: string }).status === "red") throw new Error("cluster status red");
    },
  },
  isStopping: () => stopping,
  metrics,
  onCheckFailure: (name, err) => logger.debug("readiness check failing", { check: name, err: (err as Error).message }),
});
logger.info("health endpoint listening", { port: health.port });

const shutdown = createShutdown(logger);
shutdown.register("mark not ready", () => {
  stopping = true;
});
// Finishes the in-flight batch (or abandons its retries, uncommitted) and commits what was done.
shutdown.register("stop consuming", () => indexer.stop());
shutdown.register("stop reconciler", () => reconciler.stop());
shutdown.register("stop health endpoint", () => health.stop());
shutdown.register("close opensearch", () => opensearch.close());
shutdown.register("close postgres", () => sql.end({ timeout: 5 }));
shutdown.listen();

// Kafka may be down at boot: wait for it (not ready meanwhile) instead of exiting.
await retryUntilDone("create topics", () => ensureTopics(kafka, topicSpecs(config.kafka.topics), logger), { logger, isStopping: () => stopping });
if (await retryUntilDone("start consuming", () => indexer.start().then(() => true), { logger, isStopping: () => stopping })) {
  logger.info("indexer consuming", { alias: config.searchAlias, groupId: config.groupId, rewriter: rewriter.name });
  if (!stopping) reconciler.start();
}
