import { expect, test } from "bun:test";
import { ConfigError } from "@pss/service-kit";
import { loadConfig, loadRelayConfig } from "./config.ts";

// Each URL fails to parse (bad port, space in host), the case in which the value is echoed back.
const badUrls = {
  DATABASE_URL: "postgres://pss:pg-s3cret@db:notaport/pss",
  REDIS_URL: "redis://default:redis-s3cret@redis:port",
  OPENSEARCH_URL: "http://admin:os-s3cret@open search:9200",
  KAFKA_BROKERS: "kafka:9092",
};

function bootMessage(load: () => unknown): string {
  try {
    load();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("expected a ConfigError");
}

test("api: unparsable DATABASE_URL, REDIS_URL and OPENSEARCH_URL are reported without their passwords", () => {
  const message = bootMessage(() => loadConfig(badUrls));
  expect(message).toContain("DATABASE_URL must be a URL, got 'postgres://pss:***@db:notaport/pss'");
  expect(message).toContain("REDIS_URL must be a URL, got 'redis://default:***@redis:port'");
  expect(message).toContain("OPENSEARCH_URL must be a URL, got 'http://admin:***@open search:9200'");
  expect(message).not.toContain("s3cret");
});

test("outbox relay: an unparsable DATABASE_URL is reported without its password", () => {
  const message = bootMessage(() => loadRelayConfig(badUrls));
  expect(message).toContain("DATABASE_URL must be a URL, got 'postgres://pss:***@db:notaport/pss'");
  expect(message).not.toContain("s3cret");
});

test("api: WEBHOOK_SECRET_KEY is required and must be 32 bytes; its value is never echoed", () => {
  const urls = { DATABASE_URL: "postgres://u@db/pss", REDIS_URL: "redis://redis:6379", OPENSEARCH_URL: "http://os:9200", KAFKA_BROKERS: "kafka:9092" };
  expect(bootMessage(() => loadConfig(urls))).toContain("WEBHOOK_SECRET_KEY is required");
  const message = bootMessage(() => loadConfig({ ...urls, WEBHOOK_SECRET_KEY: "hunter2-not-a-key" }));
  expect(message).toContain("WEBHOOK_SECRET_KEY must be 32 bytes");
  expect(message).not.toContain("hunter2");
  expect(loadConfig({ ...urls, WEBHOOK_SECRET_KEY: "a".repeat(64) }).webhookSecretKey).toHaveLength(32);
});
