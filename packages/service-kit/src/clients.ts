// Client factories. Only a service's main.ts calls these; everything else receives clients as dependencies.
import { Client as OpenSearchClient } from "@opensearch-project/opensearch";
import Redis from "ioredis";
import { Kafka, logLevel as kafkaLogLevel, type logCreator } from "kafkajs";
import postgres from "postgres";
import type { KafkaConfig, OpenSearchConfig, PostgresConfig, RedisConfig } from "./config.ts";
import type { Logger } from "./logger.ts";

export type Sql = postgres.Sql;

export function createPostgres(
  config: PostgresConfig,
  opts: {
    applicationName?: string;
    genericPlans?: boolean /** Seconds; a request path wants a short one to answer 503 fast. */;
    connectTimeoutSeconds?: number;
    /** Each statement's text as it is sent (a diagnostic's statement count; bench/put-anatomy.ts). */
    onQuery?: (query: string) => void;
  } = {},
): Sql {
  const prepared = config.preparedStatements !== false;
  const { onQuery } = opts;
  return postgres(config.url, {
    max: config.maxConnections,
    // Behind a transaction-pooling PgBouncer (DATABASE_PREPARED_STATEMENTS=false): unnamed statements only.
    prepare: prepared,
    idle_timeout: 30,
    connect_timeout: opts.connectTimeoutSeconds ?? 10,
    // The client's default reconnect backoff grows to 20 s after a few failed connects, and a query waiting for
    // a connection waits that long: while PostgreSQL is down requests hung 15 s instead of answering 503. A
    // failed connect is cheap, so retry after at most half a second (seconds, by consecutive failures).
    backoff: (retries: number) => Math.min(0.1 * retries, 0.5),
    onnotice: () => {},
    ...(onQuery ? { debug: (_connection: number, query: string) => onQuery(query) } : {}),
    connection: {
      application_name: opts.applicationName ?? "pss",
      // Key lookups re-planned on every execution spent more time planning (1.5 ms) than running (0.3 ms):
      // reuse the prepared statement's plan.
      // Without named statements there is no plan to reuse, and PgBouncer refuses unknown startup parameters.
      ...(opts.genericPlans && prepared ? { plan_cache_mode: "force_generic_plan" } : {}),
    },
  });
}

export function createRedis(config: RedisConfig, opts: { lazy?: boolean } = {}): Redis {
  return new Redis(config.url, {
    lazyConnect: opts.lazy ?? false,
    // Fail fast while Redis is down so callers can fall back instead of queueing forever.
    enableOfflineQueue: false,
    // Concurrent commands share one write: under load, auth lookups cost one round trip per batch, not per request.
    enableAutoPipelining: true,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
}

export function createOpenSearch(config: OpenSearchConfig): OpenSearchClient {
  return new OpenSearchClient({ node: config.url, requestTimeout: 10_000 });
}

function kafkaLogger(logger: Logger): logCreator {
  return () =>
    ({ level, log }) => {
      const { message, ...rest } = log;
      const fields = { component: "kafkajs", ...rest } as Record<string, unknown>;
      delete fields.timestamp;
      delete fields.logger;
      // Concurrent start-ups race to create topics; ensureTopics() verifies the outcome itself.
      if (fields.error === "Topic creation errors") logger.debug(message, fields);
      else if (level <= kafkaLogLevel.ERROR) logger.error(message, fields);
      else if (level === kafkaLogLevel.WARN) logger.warn(message, fields);
      else logger.debug(message, fields);
    };
}

export function createKafka(config: KafkaConfig, logger: Logger): Kafka {
  return new Kafka({
    clientId: config.clientId,
    brokers: config.brokers,
    logLevel: kafkaLogLevel.WARN,
    logCreator: kafkaLogger(logger),
    // Each wait at most 5 s: with the default 30 s cap, a service that waited through an outage (boot, relay)
    // could take half a minute to notice the broker was back.
    retry: { initialRetryTime: 200, retries: 8, maxRetryTime: 5000 },
  });
}
