import { createSecretBox, parseSecretKey, type SecretBox } from "@pss/service-kit";
import type { InfraUrls } from "./infrastructure.ts";

/** The URLs test/setup.ts put in the environment. */
export function testUrls(): InfraUrls {
  const e = process.env;
  for (const v of ["DATABASE_URL", "REDIS_URL", "KAFKA_BROKERS", "OPENSEARCH_URL"]) {
    if (!e[v])
      throw new Error(
        e.PSS_TEST_INFRA === "none"
          ? `${v} is not set: PSS_TEST_INFRA=none provides no servers, which this test needs (unset it, or run it through 'npm test -- <file>')`
          : `${v} is not set: run tests through 'npm test' or 'bun test' (test/setup.ts preload)`,
      );
  }
  const s3 = Object.fromEntries(
    ["S3_ENDPOINT", "S3_BUCKET", "S3_REGION", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY"].flatMap((v) =>
      e[v] ? [[v, e[v]!]] : [],
    ),
  );
  return {
    DATABASE_URL: e.DATABASE_URL!,
    REDIS_URL: e.REDIS_URL!,
    KAFKA_BROKERS: e.KAFKA_BROKERS!,
    OPENSEARCH_URL: e.OPENSEARCH_URL!,
    ...s3,
  };
}

/** The test object store's settings as the services read them (S3_* variables); throws when there is none. */
export interface TestS3Env {
  S3_ENDPOINT: string;
  S3_BUCKET: string;
  S3_REGION: string;
  S3_ACCESS_KEY_ID: string;
  S3_SECRET_ACCESS_KEY: string;
}

export function testS3Env(): TestS3Env {
  const urls = testUrls();
  if (!urls.S3_ENDPOINT || !urls.S3_BUCKET || !urls.S3_ACCESS_KEY_ID || !urls.S3_SECRET_ACCESS_KEY) {
    throw new Error(
      "S3_ENDPOINT, S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are not set: run tests through 'npm test' (it starts the local S3 server)",
    );
  }
  return {
    S3_ENDPOINT: urls.S3_ENDPOINT,
    S3_BUCKET: urls.S3_BUCKET,
    S3_REGION: urls.S3_REGION ?? "us-east-1",
    S3_ACCESS_KEY_ID: urls.S3_ACCESS_KEY_ID,
    S3_SECRET_ACCESS_KEY: urls.S3_SECRET_ACCESS_KEY,
  };
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * The webhook secrets key every test process uses (test/setup.ts puts it in the environment unless one is set):
 * the API harness encrypts endpoint secrets with it, spawned services decrypt with it. Fixed, so endpoints left in
 * the test database by an earlier run stay readable. Never a production key.
 */
export const TEST_WEBHOOK_SECRET_KEY = "dGVzdC1vbmx5LXdlYmhvb2stc2VjcmV0cy1rZXktMzI=";

/** The secret box the API harness gives the app (the same key as WEBHOOK_SECRET_KEY in the test environment). */
export function testWebhookSecrets(): SecretBox {
  return createSecretBox(parseSecretKey(process.env.WEBHOOK_SECRET_KEY ?? TEST_WEBHOOK_SECRET_KEY)!);
}

/**
 * The Redis rate limiters count per fixed clock window (`floor(now / windowSeconds)`, http-kit's rate-limiter.ts),
 * so a test that fills a limit and then expects a refusal must not straddle a window's end: a new window starts
 * from zero. Waits for the next window when fewer than `needSeconds` of this one are left.
 */
export async function withinOneRateWindow(windowSeconds: number, needSeconds = 30): Promise<void> {
  const left = windowSeconds - (Math.floor(Date.now() / 1000) % windowSeconds);
  if (left < needSeconds) await Bun.sleep((left + 1) * 1000);
}
