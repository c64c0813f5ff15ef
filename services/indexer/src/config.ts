// The only place the indexer service reads its environment. Fails at boot with every problem listed.
import { DEFAULT_SEARCH_ALIAS } from "@pss/contracts";
import {
  developmentProfileNotice,
  createEnvReader,
  readKafkaConfig,
  readLogLevel,
  readOpenSearchConfig,
  readSearchAlias,
  readPostgresConfig,
  type KafkaConfig,
  type LogLevel,
  type OpenSearchConfig,
  type PostgresConfig,
  readTracingConfig,
  type TracingConfig,
} from "@pss/service-kit";

export interface LlmRewriterConfig {
  url: string;
  model: string;
  apiKey?: string;
  timeoutMs: number;
}

export interface IndexerConfig {
  healthPort: number;
  logLevel: LogLevel;
  /** Spans and where they go (TRACING_ZIPKIN_URL, TRACING_SAMPLE_RATIO, TRACING_SERVICE_NAME). */
  tracing: TracingConfig;
  /** The boot line outside NODE_ENV=production (null in production). */
  developmentProfile: string | null;
  /** Protections switched off on purpose with NODE_ENV=production (`<VARIABLE>_I_UNDERSTAND=true`): a warning each at boot. */
  productionOverrides: readonly string[];
  postgres: PostgresConfig;
  kafka: KafkaConfig;
  opensearch: OpenSearchConfig;
  /** Alias buyers' search reads; the indexer creates `<alias>-v1` behind it. */
  searchAlias: string;
  groupId: string;
  /** Set only when an OpenAI-compatible endpoint is configured; otherwise the deterministic rewrite is used. */
  llmRewriter: LlmRewriterConfig | null;
  /** The reconciler (reconcile/reconciler.ts): time between runs (0: off), and when a pending listing is overdue. */
  reconcile: { intervalMs: number; pendingAfterMs: number };
}

export function loadConfig(env: Record<string, string | undefined> = process.env): IndexerConfig {
  const r = createEnvReader(env);
  const llmUrl = r.optionalString("REWRITER_LLM_URL") ? r.url("REWRITER_LLM_URL") : undefined;
  const config: IndexerConfig = {
    healthPort: r.int("HEALTH_PORT", 8082, { min: 0, max: 65535 }),
    logLevel: readLogLevel(r),
    tracing: readTracingConfig(r, "pss-indexer"),
    developmentProfile: developmentProfileNotice(r),
    productionOverrides: r.accepted(),
    postgres: readPostgresConfig(r, 5),
    kafka: readKafkaConfig(r, "pss-indexer"),
    opensearch: readOpenSearchConfig(r),
    searchAlias: readSearchAlias(r, DEFAULT_SEARCH_ALIAS),
    groupId: r.string("INDEXER_GROUP_ID", "pss-indexer"),
    llmRewriter: llmUrl
      ? {
          url: llmUrl,
          model: r.string("REWRITER_LLM_MODEL"),
          apiKey: r.optionalString("REWRITER_LLM_API_KEY"),
          timeoutMs: r.int("REWRITER_LLM_TIMEOUT_MS", 5000, { min: 100, max: 120_000 }),
        }
      : null,
    reconcile: {
      intervalMs: r.int("RECONCILE_INTERVAL_MS", 30_000, { min: 0 }),
      pendingAfterMs: r.int("RECONCILE_PENDING_AFTER_MS", 120_000, { min: 1_000 }),
    },
  };
  r.done();
  return config;
}
