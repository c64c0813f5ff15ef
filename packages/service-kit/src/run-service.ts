// The boot sequence every service runs, in one place: configuration (a bad one exits 1), logger, crash guard,
// metrics, then what the service's main.ts builds (its clients, consumers, jobs, routes), the health port, topics
// and start (both retried while Kafka or PostgreSQL are down: the process waits not ready, it never exits), and
// an ordered shutdown on SIGINT/SIGTERM:
//   1. mark not ready (and stop intake: the HTTP server stops accepting requests),
//   2. the service's own stop steps in its order (consumers finish the work in flight and commit their offsets,
//      jobs finish their tick),
//   3. stop the health port, 4. close the clients.
// main.ts stays the only place that creates clients: it hands them over here to be checked and closed.
import type { Client as OpenSearchClient } from "@opensearch-project/opensearch";
import type { TopicSpec } from "@pss/contracts";
import type Redis from "ioredis";
import type { Kafka } from "./kafka-client.ts";
import type { Sql } from "./clients.ts";
import type { LogLevel } from "./config.ts";
import { loadConfigOrExit } from "./config.ts";
import { type ConsumerMetrics, createConsumerMetrics } from "./consumer-metrics.ts";
import { installCrashGuard } from "./crash-guard.ts";
import { startHealthServer, type HealthRoutesOptions, type ReadinessCheck } from "./health.ts";
import { ensureTopics, pingKafka } from "./kafka.ts";
import { createLogger, type Logger } from "./logger.ts";
import { createOutageMetrics, type OutageMetrics } from "./outage-wait.ts";
import { createMetrics, type Metrics } from "./metrics.ts";
import { retryUntilDone } from "./retry-until.ts";
import { createTracing, type Tracing, type TracingConfig } from "./tracing.ts";
import { createShutdown, type Shutdown, type ShutdownOptions } from "./shutdown.ts";
import { connectionProblem } from "./dependency-errors.ts";

/** Clients main.ts created: each gets its standard readiness check (PostgreSQL, Kafka) and is closed last. */
export interface ServiceClients {
  sql?: Sql;
  kafka?: Kafka;
  opensearch?: OpenSearchClient;
  redis?: Redis;
}

/** Shutdown steps by name, run in the order given. */
export type ShutdownSteps = Record<string, () => unknown>;

export interface HealthHandle {
  port: number | null;
  stop(): Promise<unknown> | unknown;
}

export interface ServiceParts {
  clients: ServiceClients;
  /** Readiness checks besides the standard ones; a name given here replaces the standard check, null leaves it out. */
  checks?: Record<string, ReadinessCheck | null>;
  /** Created before start (needs clients.kafka), retried through a Kafka outage. */
  topics?: readonly TopicSpec[];
  /** The service's work (consume, relay): started after the topics, retried until it starts or the service stops. */
  start?: {
    /** For logs: "start consuming". */
    what: string;
    run(): Promise<unknown> | unknown;
    /** A readiness check of this name fails until the work started, and whenever isRunning() says false. */
    check?: string;
    isRunning?(): boolean;
  };
  /** After the work started (a log line, jobs that follow consuming). */
  started?(): void;
  /** Stops intake first, with "mark not ready" (the HTTP server). */
  stopIntake?(): unknown;
  /** Stops the work, in this order, after intake and before the health port and the clients. */
  stop: ShutdownSteps;
  /** Closes clients runService does not know (an SMTP pool), before the standard ones. */
  close?: ShutdownSteps;
  /** Log fields of the line "health endpoint listening". */
  describe?: Record<string, unknown>;
  /** Serves readiness and metrics somewhere else than the service's own health port (API workers). */
  health?(opts: HealthRoutesOptions): HealthHandle;
  shutdown?: ShutdownOptions;
}

/** The usual `start` of a consuming service: its consumers start, and readiness follows whether they run. */
export function startConsuming(
  work: { start(): Promise<unknown> | unknown; isRunning(): boolean },
  check = "consumer",
): NonNullable<ServiceParts["start"]> {
  return { what: "start consuming", run: () => work.start(), check, isRunning: () => work.isRunning() };
}

/** What runService gives main.ts's build function. */
export interface ServiceKit<C> {
  config: C;
  logger: Logger;
  metrics: Metrics;
  /** True once shutdown began. */
  isStopping(): boolean;
  /** Settles when topics and start are done (or abandoned because the service is stopping). */
  booted: Promise<void>;
  /** Runs the shutdown, then exits 0 (a supervisor asked this process to go). */
  exit(reason: string): Promise<void>;
  /** This process's consumer-group metrics (made once; a failed lag read is a debug line, never a failed scrape). */
  consumerMetrics(): ConsumerMetrics;
  /** `<service>_dependency_*` metrics of workers that wait out our own outages (made once). */
  outageMetrics(): OutageMetrics;
  /** This process's spans (config.tracing; off when the service has none): flushed at shutdown. */
  tracing: Tracing;
}

/** The process-wide pieces bootService uses; fakes in tests. */
export interface BootEnv {
  service: string;
  logger: Logger;
  metrics?: Metrics;
  shutdown: Shutdown;
  healthPort: number;
  startHealth?: (opts: HealthRoutesOptions & { port: number }) => HealthHandle;
  /** Pacing of the start retries (tests). */
  retry?: { initialDelayMs?: number; maxDelayMs?: number; sleep?: (ms: number) => Promise<void> };
}

export interface BootState {
  isStopping(): boolean;
  booted: Promise<void>;
  markStopping(): void;
}

/** The state a service's build function and its boot share: created first so build can read isStopping and booted. */
export function createBootState(): BootState & { resolveBoot: (p: Promise<unknown>) => void } {
  let stopping = false;
  let resolveBoot!: (p: Promise<unknown>) => void;
  const booted = new Promise<unknown>((resolve) => (resolveBoot = resolve)).then(() => {});
  return { isStopping: () => stopping, markStopping: () => void (stopping = true), booted, resolveBoot };
}

function standardChecks(clients: ServiceClients): Record<string, ReadinessCheck> {
  const checks: Record<string, ReadinessCheck> = {};
  const { sql, kafka } = clients;
  if (sql) checks.postgres = () => sql`SELECT 1`;
  // An admin connection per probe is not free: at most one every 10 s.
  if (kafka) checks.kafka = { run: () => pingKafka(kafka), everyMs: 10_000, timeoutMs: 2000 };
  return checks;
}

function standardCloses(clients: ServiceClients): ShutdownSteps {
  const steps: ShutdownSteps = {};
  const { opensearch, sql, redis } = clients;
  if (opensearch) steps["close opensearch"] = () => opensearch.close();
  if (sql) steps["close postgres"] = () => sql.end({ timeout: 5 });
  if (redis) steps["close redis"] = () => redis.quit();
  return steps;
}

/**
 * What readiness checks tell the log. A failure waiting cures (an outage) is a debug line: the services say more
 * about it where they wait. A failure it does not cure (credentials refused, a certificate not trusted: someone
 * must fix a setting or a server) is an error line naming the check (the server) and the problem, once per
 * problem, and a line when the check passes again.
 */
export function readinessLog(logger: Logger): Required<Pick<HealthRoutesOptions, "onCheckFailure" | "onCheckSuccess">> {
  const reported = new Map<string, string>();
  return {
    onCheckFailure(name, err) {
      const message = (err as Error)?.message ?? String(err);
      const problem = connectionProblem(err);
      if (!problem) {
        logger.debug("readiness check failing", { check: name, err: message });
        return;
      }
      if (reported.get(name) === problem) return;
      reported.set(name, problem);
      logger.error(`${name}: ${problem}; not ready until it is fixed`, { check: name, problem, err: message });
    },
    onCheckSuccess(name) {
      const problem = reported.get(name);
      if (!problem) return;
      reported.delete(name);
      logger.info(`${name}: connected again`, { check: name, after: problem });
    },
  };
}

/** Health port, shutdown steps and the retried boot of one service's parts. Returns when the boot settled. */
export async function bootService(
  parts: ServiceParts,
  env: BootEnv,
  state: ReturnType<typeof createBootState> = createBootState(),
): Promise<void> {
  const { logger, shutdown } = env;
  let workStarted = false;
  const checks: Record<string, ReadinessCheck> = { ...standardChecks(parts.clients) };
  for (const [name, check] of Object.entries(parts.checks ?? {})) {
    if (check) checks[name] = check;
    else delete checks[name];
  }
  const work = parts.start;
  if (work?.check) {
    checks[work.check] = async () => {
      if (!workStarted) throw new Error(`${work.what}: not done yet`);
      if (work.isRunning && !work.isRunning()) throw new Error("not running");
    };
  }
  const healthOptions: HealthRoutesOptions = {
    service: env.service,
    checks,
    isStopping: state.isStopping,
    metrics: env.metrics,
    ...readinessLog(logger),
  };
  const health = parts.health
    ? parts.health(healthOptions)
    : (env.startHealth ?? startHealthServer)({ ...healthOptions, port: env.healthPort });
  logger.info("health endpoint listening", { port: health.port, ...parts.describe });

  shutdown.register(parts.stopIntake ? "stop accepting requests" : "mark not ready", async () => {
    state.markStopping();
    await parts.stopIntake?.();
  });
  for (const [name, step] of Object.entries(parts.stop)) shutdown.register(name, step);
  shutdown.register("stop health endpoint", () => health.stop());
  for (const [name, step] of Object.entries({ ...parts.close, ...standardCloses(parts.clients) }))
    shutdown.register(name, step);

  // Kafka (or whatever start needs) may be down at boot: wait for it, not ready meanwhile, instead of exiting.
  const retry = { logger, isStopping: state.isStopping, ...env.retry };
  const boot = (async () => {
    const { kafka } = parts.clients;
    if (parts.topics && kafka) {
      const topics = parts.topics;
      if (
        (await retryUntilDone("create topics", () => ensureTopics(kafka, topics, logger).then(() => true), retry)) ===
        undefined
      )
        return;
    }
    if (!work) return;
    if (
      (await retryUntilDone(work.what, async () => (await work.run(), true), retry)) === undefined ||
      state.isStopping()
    )
      return;
    workStarted = true;
    parts.started?.();
  })();
  state.resolveBoot(boot);
  await boot;
}

export interface ServiceDefinition<C extends { logLevel: LogLevel; healthPort: number; tracing?: TracingConfig }> {
  /** The service's name: logs, metrics, health. */
  name: string;
  loadConfig: () => C;
  /** Fields every log line of this process carries (the API worker's index). */
  logFields?: (config: C) => Record<string, unknown> | undefined;
  /** Creates the clients and the service's parts; null: this process serves nothing itself (the API's primary). */
  build(kit: ServiceKit<C>): ServiceParts | null | Promise<ServiceParts | null>;
}

/** Runs one service process: see the top of this file. */
export async function runService<
  C extends {
    logLevel: LogLevel;
    healthPort: number;
    developmentProfile?: string | null;
    productionOverrides?: readonly string[];
    tracing?: TracingConfig;
  },
>(def: ServiceDefinition<C>): Promise<void> {
  const config = loadConfigOrExit(def.name, def.loadConfig);
  const base = def.logFields?.(config);
  const logger = createLogger({ service: def.name, level: config.logLevel, ...(base ? { base } : {}) });
  installCrashGuard(logger);
  // Outside NODE_ENV=production the service says so once (production-safety.ts).
  if (config.developmentProfile) logger.warn(config.developmentProfile);
  // In production, each protection switched off on purpose, once (production-safety.ts refuseUnlessUnderstood).
  for (const accepted of config.productionOverrides ?? []) logger.warn(`production override: ${accepted}`);
  const metrics = createMetrics({ service: def.name });
  const tracing = createTracing(config.tracing ?? { zipkinUrl: null, sampleRatio: 0, serviceName: `pss-${def.name}` }, {
    metrics,
    logger,
  });
  if (tracing.recording && config.tracing)
    logger.info("tracing on", { zipkinUrl: config.tracing.zipkinUrl, sampleRatio: config.tracing.sampleRatio });
  const state = createBootState();
  let shutdown: Shutdown | null = null;
  const parts = await def.build({
    config,
    logger,
    metrics,
    isStopping: state.isStopping,
    booted: state.booted,
    exit: async (reason) => {
      await shutdown?.run(reason);
      process.exit(0);
    },
    // Memoised: each registers its metric families once on the registry.
    consumerMetrics: once(() => createConsumerMetrics(metrics, { logger })),
    outageMetrics: once(() => createOutageMetrics(metrics, def.name)),
    tracing,
  });
  if (!parts) return;
  // The last spans (the work stopped above) leave before the clients close; bounded by the export's timeout.
  parts.close = { ...parts.close, "flush spans": () => tracing.shutdown() };
  shutdown = createShutdown(logger, parts.shutdown);
  shutdown.listen();
  await bootService(parts, { service: def.name, logger, metrics, shutdown, healthPort: config.healthPort }, state);
}

function once<T>(make: () => T): () => T {
  let made: { value: T } | null = null;
  return () => (made ??= { value: make() }).value;
}
