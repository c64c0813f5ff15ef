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

test("api: unparsable DATABASE_URL and REDIS_URL are reported without their passwords", () => {
  const message = bootMessage(() => loadConfig(badUrls));
  expect(message).toContain("DATABASE_URL must be a URL, got 'postgres://pss:***@db:notaport/pss'");
  expect(message).toContain("REDIS_URL must be a URL, got 'redis://default:***@redis:port'");
  expect(message).not.toContain("s3cret");
});

test("outbox relay: an unparsable DATABASE_URL is reported without its password", () => {
  const message = bootMessage(() => loadRelayConfig(badUrls));
  expect(message).toContain("DATABASE_URL must be a URL, got 'postgres://pss:***@db:notaport/pss'");
  expect(message).not.toContain("s3cret");
});

const minimal = {
  DATABASE_URL: "postgres://pss@db/pss",
  REDIS_URL: "redis://redis:6379",
  OPENSEARCH_URL: "http://os:9200",
  KAFKA_BROKERS: "kafka:9092",
  WEBHOOK_SECRET_KEY: "a".repeat(64),
};

test("api: PUBLIC_BASE_URL is required in production and falls back to the loopback API in local development", () => {
  expect(bootMessage(() => loadConfig({ ...minimal, NODE_ENV: "production" }))).toContain(
    "PUBLIC_BASE_URL is required when NODE_ENV=production",
  );
  expect(
    loadConfig({ ...minimal, NODE_ENV: "production", PUBLIC_BASE_URL: "https://market.example.com/" }).publicBaseUrl,
  ).toBe("https://market.example.com");
  expect(loadConfig({ ...minimal, API_PORT: "9000" }).publicBaseUrl).toBe("http://127.0.0.1:9000");
});

test("api: WEBHOOK_SECRET_KEY is required in every environment and must be 32 bytes; its value is never echoed", () => {
  const { WEBHOOK_SECRET_KEY: _, ...withoutKey } = minimal;
  expect(bootMessage(() => loadConfig(withoutKey))).toContain("WEBHOOK_SECRET_KEY is required");
  expect(
    bootMessage(() =>
      loadConfig({ ...withoutKey, NODE_ENV: "production", PUBLIC_BASE_URL: "https://market.example.com" }),
    ),
  ).toContain("WEBHOOK_SECRET_KEY is required");
  const message = bootMessage(() => loadConfig({ ...withoutKey, WEBHOOK_SECRET_KEY: "hunter2-not-a-key" }));
  expect(message).toContain("WEBHOOK_SECRET_KEY must be 32 bytes");
  expect(message).not.toContain("hunter2");
  expect(loadConfig(minimal).webhookSecretKey).toEqual(Buffer.from("a".repeat(64), "hex"));
});
