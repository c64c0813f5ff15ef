// Composition root: the only place that creates clients; runService (service-kit) boots, checks and stops them.
import { topicSpecs } from "@pss/contracts";
import { createKafka, createOpenSearch, createPostgres, runService, startConsuming } from "@pss/service-kit";
import type { ServiceKit, ServiceParts } from "@pss/service-kit";
import { loadConfig } from "./config.ts";
import { createIndexer } from "./indexer.ts";
import { registerIndexingGauges } from "./indexer-metrics.ts";
import { createReconciler, createReconcilerMetrics } from "./reconcile/reconciler.ts";
import { createDeterministicRewriter } from "./rewriting/description-rewriter.ts";
import { createLlmRewriter } from "./rewriting/llm-rewriter.ts";

await runService({ name: "indexer", loadConfig, build });

function build(kit: ServiceKit<ReturnType<typeof loadConfig>>): ServiceParts {
  const { config, logger, metrics } = kit;
  const sql = createPostgres(config.postgres, { applicationName: "pss-indexer" });
  const opensearch = createOpenSearch(config.opensearch);
  const kafka = createKafka(config.kafka, logger);
  const rewriter = config.llmRewriter
    ? createLlmRewriter({ ...config.llmRewriter, logger })
    : createDeterministicRewriter();
  registerIndexingGauges({ metrics, sql, logger });
  const consumerMetrics = kit.consumerMetrics();
  const indexer = createIndexer({
    tracing: kit.tracing,
    kafka,
    sql,
    opensearch,
    alias: config.searchAlias,
    groupId: config.groupId,
    rewriter,
    logger,
    metrics: consumerMetrics,
    session: config.kafka.consumer,
  });
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
  return {
    clients: { sql, kafka, opensearch },
    checks: {
      opensearch: async () => {
        const res = await opensearch.cluster.health({}, { requestTimeout: 1500, maxRetries: 0 });
        if ((res.body as { status?: string }).status === "red") throw new Error("cluster status red");
      },
    },
    topics: topicSpecs(config.kafka.topics),
    start: startConsuming(indexer),
    started() {
      logger.info("indexer consuming", { alias: config.searchAlias, groupId: config.groupId, rewriter: rewriter.name });
      reconciler.start();
    },
    stop: {
      // Finishes the in-flight batch (or abandons its retries, uncommitted) and commits what was done.
      "stop consuming": () => indexer.stop(),
      "stop reconciler": () => reconciler.stop(),
    },
  };
}
