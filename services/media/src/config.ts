// The only place the media service reads its environment. Fails at boot with every problem listed.
import { availableParallelism } from "node:os";
import {
  developmentProfileNotice,
  createEnvReader,
  readAllowedHosts,
  readKafkaConfig,
  readLogLevel,
  readMediaStorageConfig,
  readPostgresConfig,
  type KafkaConfig,
  type LogLevel,
  type MediaStorageConfig,
  type PostgresConfig,
  readTracingConfig,
  type TracingConfig,
} from "@pss/service-kit";

export interface MediaConfig {
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
  groupId: string;
  /** Where variants are written (MEDIA_STORAGE): records keep only their names; the API builds the URLs. */
  storage: MediaStorageConfig;
  /** Images transformed at once; libvips threads per image come from sharpThreads. */
  concurrency: number;
  /** Downloads at once (I/O bound, so more than concurrency). */
  downloadConcurrency: number;
  sharpThreads: number;
  maxDownloadBytes: number;
  maxInputPixels: number;
  connectTimeoutMs: number;
  totalTimeoutMs: number;
  /** host or host:port entries exempt from the private-address check (tests serve images from 127.0.0.1). */
  allowedHosts: string[];
  maxAttempts: number;
  retryBaseMs: number;
  /**
   * How long a claim on an image lasts: no other instance starts on it meanwhile, and an image whose worker died
   * (SIGKILL, host lost) is taken up again by any instance once it runs out.
   */
  claimTimeoutMs: number;
  retryPollMs: number;
  /** 0 turns the periodic sweep off. */
  gcIntervalMs: number;
  gcGraceMs: number;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): MediaConfig {
  const r = createEnvReader(env);
  const cpus = availableParallelism();
  const concurrency = r.int("MEDIA_CONCURRENCY", cpus, { min: 1, max: 256 });
  const totalTimeoutMs = r.int("MEDIA_TOTAL_TIMEOUT_MS", 15_000, { min: 10 });
  const config: MediaConfig = {
    healthPort: r.int("HEALTH_PORT", 8081, { min: 0, max: 65535 }),
    logLevel: readLogLevel(r),
    tracing: readTracingConfig(r, "pss-media"),
    developmentProfile: developmentProfileNotice(r),
    productionOverrides: r.accepted(),
    postgres: readPostgresConfig(r, 5),
    kafka: readKafkaConfig(r, "pss-media"),
    groupId: r.string("MEDIA_CONSUMER_GROUP", "pss-media"),
    storage: readMediaStorageConfig(r),
    concurrency,
    downloadConcurrency: r.int("MEDIA_DOWNLOAD_CONCURRENCY", concurrency * 4, { min: 1, max: 1024 }),
    sharpThreads: r.int("MEDIA_SHARP_THREADS", 1, { min: 1, max: 64 }),
    maxDownloadBytes: r.int("MEDIA_MAX_DOWNLOAD_BYTES", 20 * 1024 * 1024, { min: 1024 }),
    maxInputPixels: r.int("MEDIA_MAX_INPUT_PIXELS", 50_000_000, { min: 10_000 }),
    connectTimeoutMs: r.int("MEDIA_CONNECT_TIMEOUT_MS", 5_000, { min: 10 }),
    totalTimeoutMs,
    allowedHosts: readAllowedHosts(r, "MEDIA_ALLOWED_HOSTS", "partners' image URLs"),
    maxAttempts: r.int("MEDIA_MAX_ATTEMPTS", 4, { min: 1, max: 20 }),
    retryBaseMs: r.int("MEDIA_RETRY_BASE_MS", 2_000, { min: 1 }),
    // The slowest attempt (the whole download, then decoding and storing) fits well inside the default.
    claimTimeoutMs: r.int("MEDIA_CLAIM_TIMEOUT_MS", totalTimeoutMs + 60_000, { min: 1_000 }),
    retryPollMs: r.int("MEDIA_RETRY_POLL_MS", 1_000, { min: 10 }),
    gcIntervalMs: r.int("MEDIA_GC_INTERVAL_MS", 3_600_000, { min: 0 }),
    gcGraceMs: r.int("MEDIA_GC_GRACE_MS", 3_600_000, { min: 0 }),
  };
  r.done();
  return config;
}
