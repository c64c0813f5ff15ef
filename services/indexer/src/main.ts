// Composition root: the only place that creates clients, wires dependencies and handles shutdown.
import { ALL_TOPICS } from "@pss/contracts";
import { ConfigError, startHealthServer, createKafka, createLogger, createOpenSearch, createPostgres, createShutdown, ensureTopics, pingKafka } from "@pss/service-kit";
import { loadConfig, type IndexerConfig } from "./config.ts";
import { createIndexer } from "./indexer.ts";
import { createDeterministicRewriter } from "./rewriting/description-rewriter.ts";
import { createLlmRewriter } from "./rewriting/llm-rewriter.ts";

let config: IndexerConfig;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(`indexer: ${err.message}`);
    process.exit(1);
  }
  throw err;
}

const logger = createLogger({ service: "indexer", level: config.logLevel });
const sql = createPostgres(config.postgres, { applicationName: "pss-indexer" });
const opensearch = createOpenSearch(config.opensearch);
const kafka = createKafka(config.kafka, logger);
await ensureTopics(kafka, ALL_TOPICS);

const rewriter = config.llmRewriter ? createLlmRewriter({ ...config.llmRewriter, logger }) : createDeterministicRewriter();
const indexer = createIndexer({ kafka, sql, opensearch, alias: config.searchAlias, groupId: config.groupId, rewriter, logger });

let stopping = false;
const health = startHealthServer({
  service: "indexer",
  port: config.healthPort,
  checks: {
    postgres: () => sql`SELECT 1`,
    kafka: () => pingKafka(kafka),
    opensearch: async () => {
      const res = await opensearch.cluster.health({}, { requestTimeout: 1500, maxRetries: 0 });
      if ((res.body as { status?: string }).status === "red") throw new Error("cluster status red");
    },
  },
  isStopping: () => stopping,
});
logger.info("health endpoint listening", { port: health.port });

const shutdown = createShutdown(logger);
shutdown.register("mark not ready", () => {
  stopping = true;
});
// Finishes the in-flight batch (or abandons its retries, uncommitted) and commits what was done.
shutdown.register("stop consuming", () => indexer.stop());
shutdown.register("stop health endpoint", () => health.stop());
shutdown.register("close opensearch", () => opensearch.close());
shutdown.register("close postgres", () => sql.end({ timeout: 5 }));
shutdown.listen();

await indexer.start();
logger.info("indexer consuming", { alias: config.searchAlias, groupId: config.groupId, rewriter: rewriter.name });
