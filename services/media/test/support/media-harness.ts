// Starts the real media service in-process against the test PostgreSQL and Kafka, confined to the partners a
// test registers (other engineers' tests share both), with its consumer group starting at the topics' ends.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Kafka, logLevel } from "kafkajs";
import { startGroupAtEnd } from "../../../../test/support/consumer-groups.ts";
import postgres from "postgres";
import { ALL_TOPICS, Topics } from "@pss/contracts";
import {
  createEnvReader,
  createLogger,
  createMediaStorage,
  ensureTopics,
  readMediaStorageConfig,
  silentLogger,
  type Logger,
  type MediaStorage,
} from "@pss/service-kit";
import { loadConfig } from "../../src/config.ts";
import { configureSharp } from "../../src/images/image-processor.ts";
import { createMediaService, type MediaService, type MediaServiceDeps } from "../../src/media-service.ts";
import { testS3Env, testUrls, uniqueName } from "../../../../test/support/env.ts";

/** The directory the API test harness serves /media from (services/api/test/support/harness.ts). */
export const testMediaDir = () => resolve(process.env.MEDIA_DIR ?? ".data/media-test");

export const TEST_PUBLIC_BASE_URL = "https://market.example.test";

export type StorageKind = "local" | "s3";

export interface TestStorage {
  kind: StorageKind;
  storage: MediaStorage;
  /** The variables that select this storage (MEDIA_STORAGE and MEDIA_DIR or S3_*), for processes. */
  env: Record<string, string>;
  /** Removes everything stored. */
  cleanup(): Promise<void>;
}

/**
 * A storage of the test's own, so garbage collection sweeps and listings see only its files: a fresh directory,
 * or a fresh key prefix in the test bucket of the real S3-compatible server.
 */
export async function createTestStorage(kind: StorageKind): Promise<TestStorage> {
  const env: Record<string, string> =
    kind === "local"
      ? { MEDIA_STORAGE: "local", MEDIA_DIR: await mkdtemp(join(tmpdir(), "pss-media-test-")) }
      : { MEDIA_STORAGE: "s3", ...testS3Env(), S3_PREFIX: `${uniqueName("test")}/` };
  const r = createEnvReader(env);
  const storage = createMediaStorage(readMediaStorageConfig(r));
  r.done();
  return {
    kind,
    storage,
    env,
    async cleanup() {
      if (kind === "local") return rm(env.MEDIA_DIR!, { recursive: true, force: true });
      const names: string[] = [];
      for await (const f of storage.list()) names.push(f.name);
      for (const name of names) await storage.delete(name);
    },
  };
}

export interface MediaHarness {
  service: MediaService;
  sql: postgres.Sql;
  kafka: Kafka;
  partners: Set<string>;
  groupId: string;
  stop(): Promise<void>;
}

export async function startMedia(
  opts: { env?: Record<string, string>; partners?: Iterable<string>; storage?: MediaStorage; logger?: Logger } & Pick<
    MediaServiceDeps,
    "outageMetrics" | "outageBackoff"
  > = {},
): Promise<MediaHarness> {
  const urls = testUrls();
  const groupId = uniqueName("media-test");
  const config = loadConfig({
    DATABASE_URL: urls.DATABASE_URL,
    KAFKA_BROKERS: urls.KAFKA_BROKERS,
    MEDIA_CONSUMER_GROUP: groupId,
    MEDIA_DIR: testMediaDir(),
    MEDIA_GC_INTERVAL_MS: "0",
    ...opts.env,
  });
  configureSharp(config.sharpThreads);
  const logger =
    opts.logger ?? (process.env.TEST_LOGS ? createLogger({ service: "media-test", level: "debug" }) : silentLogger);
  // Its own application_name: a test can tell the service's sessions apart in pg_stat_activity.
  const sql = postgres(urls.DATABASE_URL, { max: 5, onnotice: () => {}, connection: { application_name: groupId } });
  const kafka = new Kafka({
    clientId: groupId,
    brokers: urls.KAFKA_BROKERS.split(","),
    logLevel: logLevel.NOTHING,
    retry: { retries: 5, initialRetryTime: 200 },
  });
  await ensureTopics(kafka, ALL_TOPICS);
  await startGroupAtEnd(kafka, groupId, [Topics.listingEvents.name, Topics.brokerEvents.name]);
  const partners = new Set(opts.partners ?? []);
  const service = createMediaService({
    config,
    sql,
    kafka,
    logger,
    onlyPartners: partners,
    storage: opts.storage,
    outageMetrics: opts.outageMetrics,
    outageBackoff: opts.outageBackoff,
  });
  await service.start();
  return {
    service,
    sql,
    kafka,
    partners,
    groupId,
    async stop() {
      await service.stop();
      await sql.end({ timeout: 5 });
    },
  };
}

export async function until<T>(
  what: string,
  check: () => Promise<T | null | undefined | false> | T | null | undefined | false,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

export { startGroupAtEnd };
