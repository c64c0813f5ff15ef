// Reads an environment once, collecting every problem so a misconfigured service fails at boot with one clear message.
// Values are echoed in problems to help fix them, URLs without their credentials (a URL that fails to
// parse often does so because of its password).
import { DEFAULT_TOPIC_SETTINGS, type TopicSettings } from "@pss/contracts";
import {
  checkDatabaseUrl,
  checkPublicBaseUrl,
  checkReplicationFactor,
  isProduction,
  PRODUCTION_REPLICATION_FACTOR,
  refuseUnlessUnderstood,
} from "./production-safety.ts";
import {
  readKafkaSecurity,
  readOpenSearchSecurity,
  readPostgresTls,
  readRedisSecurity,
  type KafkaSecurity,
  type OpenSearchSecurity,
  type PostgresTls,
  type RedisSecurity,
} from "./connection-security.ts";
import { redactUrl } from "./redact.ts";

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/** A service's configuration, or exit 1 with every problem on stderr: a bad environment never starts a process. */
export function loadConfigOrExit<T>(service: string, load: () => T): T {
  try {
    return load();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`${service}: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
}

type Env = Record<string, string | undefined>;

export interface EnvReader {
  string(name: string, fallback?: string): string;
  optionalString(name: string): string | undefined;
  int(name: string, fallback?: number, range?: { min?: number; max?: number }): number;
  bool(name: string, fallback: boolean): boolean;
  url(name: string, fallback?: string, protocols?: string[]): string;
  list(name: string, fallback?: string[]): string[];
  oneOf<T extends string>(name: string, values: readonly T[], fallback: T): T;
  /** Records a problem no single read can see (a combination of variables). */
  problem(message: string): void;
  /** Records a switched-off protection production accepts on purpose (production-safety.ts refuseUnlessUnderstood). */
  accept(message: string): void;
  /** What accept() recorded, for one warning line each at boot; the live list, so read it whenever. */
  accepted(): readonly string[];
  /** Throws ConfigError when any read failed. */
  done(): void;
}

export function createEnvReader(env: Env): EnvReader {
  const problems: string[] = [];
  const accepted: string[] = [];
  const raw = (name: string) => {
    const v = env[name];
    return v === undefined || v.trim() === "" ? undefined : v.trim();
  };
  const missing = (name: string) => {
    problems.push(`${name} is required`);
  };
  return {
    string(name, fallback) {
      const v = raw(name) ?? fallback;
      if (v === undefined) missing(name);
      return v ?? "";
    },
    optionalString(name) {
      return raw(name);
    },
    int(name, fallback, range = {}) {
      const v = raw(name);
      if (v === undefined) {
        if (fallback === undefined) missing(name);
        return fallback ?? 0;
      }
      const n = Number(v);
      if (!Number.isInteger(n)) {
        problems.push(`${name} must be an integer, got '${v}'`);
        return fallback ?? 0;
      }
      if ((range.min !== undefined && n < range.min) || (range.max !== undefined && n > range.max)) {
        problems.push(`${name} must be between ${range.min ?? "-inf"} and ${range.max ?? "inf"}, got ${n}`);
      }
      return n;
    },
    bool(name, fallback) {
      const v = raw(name)?.toLowerCase();
      if (v === undefined) return fallback;
      if (["1", "true", "yes", "on"].includes(v)) return true;
      if (["0", "false", "no", "off"].includes(v)) return false;
      problems.push(`${name} must be true or false, got '${v}'`);
      return fallback;
    },
    url(name, fallback, protocols = ["http:", "https:"]) {
      const v = raw(name) ?? fallback;
      if (v === undefined) {
        missing(name);
        return "";
      }
      try {
        const u = new URL(v);
        if (!protocols.includes(u.protocol))
          problems.push(`${name} must use ${protocols.join(" or ")}, got '${u.protocol}'`);
      } catch {
        problems.push(`${name} must be a URL, got '${redactUrl(v)}'`);
      }
      return v;
    },
    list(name, fallback) {
      const v = raw(name);
      if (v === undefined) {
        if (fallback === undefined) missing(name);
        return fallback ?? [];
      }
      return v
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
    },
    oneOf(name, values, fallback) {
      const v = raw(name) ?? fallback;
      if (!(values as readonly string[]).includes(v)) {
        problems.push(`${name} must be one of ${values.join(", ")}, got '${v}'`);
        return fallback;
      }
      return v as typeof fallback;
    },
    problem(message) {
      problems.push(message);
    },
    accept(message) {
      accepted.push(message);
    },
    accepted() {
      return accepted;
    },
    done() {
      if (problems.length > 0) throw new ConfigError(problems);
    },
  };
}

// Typed fragments that several services share.

export type LogLevel = "debug" | "info" | "warn" | "error";

export interface PostgresConfig {
  url: string;
  maxConnections: number;
  /**
   * Named prepared statements (true by default, DATABASE_PREPARED_STATEMENTS). Set false when DATABASE_URL is a
   * transaction-pooling PgBouncer older than 1.21 (or without max_prepared_statements): a statement prepared on one
   * server connection is not on the next.
   */
  preparedStatements?: boolean;
  /** DATABASE_URL's sslmode and the TLS files (absent: what the URL says, read by the client). */
  tls?: PostgresTls;
}
export interface KafkaConfig {
  brokers: string[];
  clientId: string;
  /** TLS and SASL (absent: plaintext, no authentication). */
  security?: KafkaSecurity;
  /** How missing topics are created (and grown). */
  topics: TopicSettings;
  /** Consumer-group membership timing (workers). */
  consumer: ConsumerSettings;
}

export interface ConsumerSettings {
  /** A member that sends no heartbeat for this long is removed from the group and its partitions reassigned. */
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
  /** How long the group waits for every member to rejoin during a rebalance (a member busy longer is dropped). */
  rebalanceTimeoutMs: number;
}

export const DEFAULT_CONSUMER_SETTINGS: ConsumerSettings = {
  sessionTimeoutMs: 30_000,
  heartbeatIntervalMs: 3_000,
  rebalanceTimeoutMs: 60_000,
};

/** Heartbeats well inside the session: a tenth of it (kafkajs and Kafka want less than a third), at least 1 s. */
export function heartbeatIntervalFor(sessionTimeoutMs: number): number {
  return Math.max(1000, Math.floor(sessionTimeoutMs / 10));
}
/** `url` without credentials when they were read; `tls` absent or null: plaintext. */
export interface RedisConfig extends Partial<RedisSecurity> {
  url: string;
}
export interface OpenSearchConfig extends Partial<OpenSearchSecurity> {
  url: string;
}

export function readPostgresConfig(r: EnvReader, defaultMax = 10): PostgresConfig {
  const given = r.url("DATABASE_URL", undefined, ["postgres:", "postgresql:"]);
  checkDatabaseUrl(r, given);
  const { url, tls } = readPostgresTls(r, given);
  return {
    url,
    tls,
    maxConnections: r.int("DATABASE_POOL_SIZE", defaultMax, { min: 1, max: 200 }),
    preparedStatements: r.bool("DATABASE_PREPARED_STATEMENTS", true),
  };
}
export function readKafkaConfig(r: EnvReader, clientId: string): KafkaConfig {
  // Kafka's own bounds: group.min.session.timeout.ms 6 s and group.max.session.timeout.ms 30 min by default.
  const sessionTimeoutMs = r.int("KAFKA_SESSION_TIMEOUT_MS", DEFAULT_CONSUMER_SETTINGS.sessionTimeoutMs, {
    min: 6_000,
    max: 1_800_000,
  });
  const brokers = r.list("KAFKA_BROKERS");
  // Production's default is 3 copies; fewer only on purpose (production-safety.ts).
  const replicationFactor = r.int(
    "KAFKA_REPLICATION_FACTOR",
    isProduction(r) ? PRODUCTION_REPLICATION_FACTOR : DEFAULT_TOPIC_SETTINGS.replicationFactor,
    { min: 1, max: 10 },
  );
  checkReplicationFactor(r, replicationFactor);
  // Copies that must have an event before it is acknowledged (acks=all): production's default is 2 of 3, so one
  // broker may be lost without losing an acknowledged event; elsewhere the broker's own default.
  const minInsync = r.optionalString("KAFKA_MIN_INSYNC_REPLICAS")
    ? r.int("KAFKA_MIN_INSYNC_REPLICAS", undefined, { min: 1, max: 10 })
    : isProduction(r) && replicationFactor >= PRODUCTION_REPLICATION_FACTOR
      ? PRODUCTION_REPLICATION_FACTOR - 1
      : undefined;
  // A topic whose min.insync.replicas exceeds its replicas refuses every write with acks=all.
  if (minInsync !== undefined && minInsync > replicationFactor)
    r.problem(
      `KAFKA_MIN_INSYNC_REPLICAS (${minInsync}) must not exceed KAFKA_REPLICATION_FACTOR (${replicationFactor}): no write could ever be acknowledged`,
    );
  return {
    brokers,
    clientId,
    security: readKafkaSecurity(r, brokers),
    topics: {
      partitions: r.int("KAFKA_TOPIC_PARTITIONS", DEFAULT_TOPIC_SETTINGS.partitions, { min: 1, max: 1000 }),
      replicationFactor,
      ...(minInsync !== undefined ? { minInsyncReplicas: minInsync } : {}),
    },
    consumer: {
      sessionTimeoutMs,
      heartbeatIntervalMs: heartbeatIntervalFor(sessionTimeoutMs),
      rebalanceTimeoutMs: r.int("KAFKA_REBALANCE_TIMEOUT_MS", DEFAULT_CONSUMER_SETTINGS.rebalanceTimeoutMs, {
        min: 6_000,
        max: 1_800_000,
      }),
    },
  };
}
export function readRedisConfig(r: EnvReader): RedisConfig {
  return readRedisSecurity(r, r.url("REDIS_URL", undefined, ["redis:", "rediss:"]));
}
export function readOpenSearchConfig(r: EnvReader): OpenSearchConfig {
  return readOpenSearchSecurity(r, r.url("OPENSEARCH_URL"));
}
/** OPENSEARCH_INDEX_ALIAS, an OpenSearch index name: lower case letters, digits, . _ -, not starting with a symbol. */
export function readSearchAlias(r: EnvReader, fallback: string): string {
  const alias = r.string("OPENSEARCH_INDEX_ALIAS", fallback);
  if (!/^[a-z0-9][a-z0-9._-]{0,200}$/.test(alias))
    r.problem(`OPENSEARCH_INDEX_ALIAS must be lower case letters, digits, '.', '_' or '-', got '${alias}'`);
  return alias;
}
/**
 * PUBLIC_BASE_URL, the address buyers and partners reach the API at (links, image URLs, e-mails), without a
 * trailing slash. Required in production, recognised by NODE_ENV=production (the image sets it), and not a
 * loopback address there; anywhere else is local development, where it falls back to the loopback API so
 * `npm start` needs no settings.
 */
export function readPublicBaseUrl(r: EnvReader, localFallback: string): string {
  const given = r.optionalString("PUBLIC_BASE_URL");
  if (given === undefined && isProduction(r)) {
    r.problem(
      "PUBLIC_BASE_URL is required when NODE_ENV=production: the address buyers and partners reach the API at, e.g. https://market.example.com",
    );
    return localFallback;
  }
  const url = r.url("PUBLIC_BASE_URL", localFallback).replace(/\/+$/, "");
  checkPublicBaseUrl(r, given);
  return url;
}

/**
 * A limit where `0` turns it off (`fallback` when unset): with NODE_ENV=production, 0 needs
 * `<NAME>_I_UNDERSTAND=true` (production-safety.ts). `off` completes "<NAME>=0 …": what is then unprotected.
 */
export function readLimit(r: EnvReader, name: string, fallback: number, off: string): number {
  const n = r.int(name, fallback, { min: 0 });
  if (n === 0) refuseUnlessUnderstood(r, name, "0", off);
  return n;
}

/**
 * `host[:port]` entries exempt from the private-address check of outbound requests to partners' URLs (test
 * receivers and image hosts on loopback), lower case. With NODE_ENV=production any entry needs
 * `<NAME>_I_UNDERSTAND=true`: an exempt host is one a partner's URL can reach inside our network.
 */
export function readAllowedHosts(r: EnvReader, name: string, partnersUrls: string): string[] {
  const hosts = r.list(name, []).map((h) => h.toLowerCase());
  if (hosts.length > 0)
    refuseUnlessUnderstood(
      r,
      name,
      hosts.join(","),
      `switches off the private-address check for these hosts: ${partnersUrls} naming one reach inside our network`,
    );
  return hosts;
}

export function readLogLevel(r: EnvReader): LogLevel {
  return r.oneOf("LOG_LEVEL", ["debug", "info", "warn", "error"] as const, "info");
}
