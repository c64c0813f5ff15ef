// Client factories. Only a service's main.ts calls these; everything else receives clients as dependencies.
import { Client as OpenSearchClient } from "@opensearch-project/opensearch";
import { Agent as HttpsAgent } from "node:https";
import { checkServerIdentity, type ConnectionOptions, type PeerCertificate } from "node:tls";
import Redis from "ioredis";
import postgres from "postgres";
import type { OpenSearchConfig, PostgresConfig, RedisConfig } from "./config.ts";
import { tlsConnectOptions, type TlsFiles } from "./tls-files.ts";

export type Sql = postgres.Sql;

/** postgres.js's `ssl` option: false, one of its mode names, or tls.connect options. */
export type PostgresSsl = boolean | "prefer" | ConnectionOptions;

/**
 * DATABASE_URL's sslmode as libpq means it, for postgres.js (which reads only some of it from the URL):
 * disable: plaintext; allow, prefer: TLS when the server offers it, unverified; require: TLS, unverified (verified
 * against the CA like verify-ca when a CA file is given, as libpq does); verify-ca: the server's certificate must
 * chain to the CA (the system's, or DATABASE_TLS_CA_FILE); verify-full: that, and it must name the host in the URL.
 * Also the migration commands' (packages/database) connection.
 */
export function postgresConnection(config: Pick<PostgresConfig, "url" | "tls">): { url: string; ssl: PostgresSsl } {
  const tls = config.tls;
  if (!tls || tls.mode === null) return { url: config.url, ssl: false };
  const files = tlsConnectOptions(tls.files);
  const host = (() => {
    try {
      return new URL(config.url).hostname.replace(/^\[|\]$/g, "");
    } catch {
      return "";
    }
  })();
  const mode = tls.mode === "require" && tls.files.caFile ? "verify-ca" : tls.mode;
  switch (mode) {
    case "disable":
      return { url: config.url, ssl: false };
    case "allow":
    case "prefer":
      return { url: config.url, ssl: "prefer" };
    case "require":
      return { url: config.url, ssl: Object.assign(files, { rejectUnauthorized: false }) };
    case "verify-ca":
      return {
        url: config.url,
        ssl: Object.assign(files, { rejectUnauthorized: true, checkServerIdentity: () => undefined }),
      };
    default:
      // The host of the URL, not the one tls.connect guesses: postgres.js sends no servername for an IP address.
      return {
        url: config.url,
        ssl: Object.assign(files, {
          rejectUnauthorized: true,
          checkServerIdentity: (_: string, cert: PeerCertificate) => checkServerIdentity(host, cert),
        }),
      };
  }
}

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
  const { url, ssl } = postgresConnection(config);
  return postgres(url, {
    ssl,
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
    // rediss://: the TLS files (re-read when rotated); the credentials given apart from the URL.
    ...(config.tls ? { tls: tlsConnectOptions(config.tls) } : {}),
    ...(config.username ? { username: config.username } : {}),
    ...(config.password ? { password: config.password } : {}),
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

/**
 * A readiness check of a Redis client that fails with the reason of the last failed connection (the server's
 * WRONGPASS, a certificate not trusted) rather than only the client's state, so the log can name the problem.
 */
export function redisReadiness(redis: Redis): () => Promise<void> {
  let lastError: Error | null = null;
  redis.on("error", (err: Error) => (lastError = err));
  redis.on("ready", () => (lastError = null));
  return async () => {
    if (redis.status === "ready") return;
    throw lastError
      ? Object.assign(new Error(`redis connection ${redis.status}: ${lastError.message}`), { cause: lastError })
      : new Error(`redis connection ${redis.status}`);
  };
}

export function createOpenSearch(config: OpenSearchConfig): OpenSearchClient {
  const tls = config.tls;
  return new OpenSearchClient({
    node: config.url,
    requestTimeout: 10_000,
    ...(config.username && config.password ? { auth: { username: config.username, password: config.password } } : {}),
    // The client would copy TLS options into its agent once; an agent whose options read the files keeps a rotated
    // CA or client certificate working (the runtime reads the agent's options per connection).
    ...(tls ? { agent: () => reloadingHttpsAgent(tls) } : {}),
  });
}

/** The OpenSearch client's default agent, whose TLS options read their files (tls-files.ts). */
function reloadingHttpsAgent(files: TlsFiles): HttpsAgent {
  const agent = new HttpsAgent({ keepAlive: true, keepAliveMsecs: 1000, maxSockets: 256, maxFreeSockets: 256 });
  const options = (agent as unknown as { options: object }).options;
  Object.defineProperties(options, Object.getOwnPropertyDescriptors(tlsConnectOptions(files)));
  return agent;
}
