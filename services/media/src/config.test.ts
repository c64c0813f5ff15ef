import { expect, test } from "bun:test";
import { ConfigError } from "@pss/service-kit";
import { loadConfig } from "./config.ts";

test("media: an unparsable DATABASE_URL is reported without its password", () => {
  let message = "";
  try {
    loadConfig({ DATABASE_URL: "postgres://pss:pg-s3cret@db:notaport/pss", KAFKA_BROKERS: "kafka:9092" });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    message = (err as Error).message;
  }
  expect(message).toContain("DATABASE_URL must be a URL, got 'postgres://pss:***@db:notaport/pss'");
  expect(message).not.toContain("s3cret");
});

test("media: storage is a directory unless MEDIA_STORAGE=s3, which reads the S3_* variables; no public URL is needed", () => {
  const base = { DATABASE_URL: "postgres://pss@db/pss", KAFKA_BROKERS: "kafka:9092", NODE_ENV: "production" };
  expect(loadConfig(base).storage).toEqual({ kind: "local", dir: ".data/media" });
  const s3 = loadConfig({
    ...base,
    MEDIA_STORAGE: "s3",
    S3_BUCKET: "media",
    S3_ACCESS_KEY_ID: "k",
    S3_SECRET_ACCESS_KEY: "s",
    S3_PREFIX: "/variants/",
    S3_FORCE_PATH_STYLE: "false",
  }).storage;
  expect(s3).toMatchObject({
    kind: "s3",
    endpoint: undefined,
    bucket: "media",
    prefix: "variants/",
    forcePathStyle: false,
  });
  expect(() => loadConfig({ ...base, MEDIA_STORAGE: "gcs" })).toThrow(
    "MEDIA_STORAGE must be one of local, s3, got 'gcs'",
  );
});

test("media: a claim on an image lasts the whole download plus a minute unless MEDIA_CLAIM_TIMEOUT_MS says otherwise", () => {
  const base = { DATABASE_URL: "postgres://pss@db/pss", KAFKA_BROKERS: "kafka:9092" };
  expect(loadConfig(base).claimTimeoutMs).toBe(75_000);
  expect(loadConfig({ ...base, MEDIA_TOTAL_TIMEOUT_MS: "5000" }).claimTimeoutMs).toBe(65_000);
  expect(loadConfig({ ...base, MEDIA_CLAIM_TIMEOUT_MS: "12000" }).claimTimeoutMs).toBe(12_000);
  expect(() => loadConfig({ ...base, MEDIA_CLAIM_TIMEOUT_MS: "10" })).toThrow(
    "MEDIA_CLAIM_TIMEOUT_MS must be between 1000 and inf, got 10",
  );
});
