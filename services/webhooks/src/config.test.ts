import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { ConfigError } from "@pss/service-kit";
import { loadConfig } from "./config.ts";

const base = {
  DATABASE_URL: "postgres://u@db/pss",
  KAFKA_BROKERS: "kafka:9092",
  WEBHOOK_SECRET_KEY: randomBytes(32).toString("base64"),
};

function problems(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  return "";
}

test("webhooks: the defaults are the issue's: 10 s timeout, the ten-step schedule, disabled after 5 days", () => {
  const config = loadConfig(base);
  expect(config.timeoutMs).toBe(10_000);
  expect(config.retryScheduleMs).toHaveLength(10);
  expect(config.retryScheduleMs[0]).toBe(0);
  expect(config.disableAfterMs).toBe(5 * 24 * 3600 * 1000);
  expect(config.healthPort).toBe(8086);
  expect(config.allowedHosts).toEqual([]);
});

test("webhooks: WEBHOOK_ALLOWED_HOSTS and a short schedule for tests are read", () => {
  const config = loadConfig({
    ...base,
    WEBHOOK_ALLOWED_HOSTS: "127.0.0.1:4000, Receiver.Local",
    WEBHOOK_RETRY_SCHEDULE: "0,500ms,1s",
  });
  expect(config.allowedHosts).toEqual(["127.0.0.1:4000", "receiver.local"]);
  expect(config.retryScheduleMs).toEqual([0, 500, 1000]);
});

test("webhooks: a missing or malformed secret key and a bad schedule are all reported at boot", () => {
  const { WEBHOOK_SECRET_KEY: _, ...withoutKey } = base;
  expect(problems(withoutKey)).toContain("WEBHOOK_SECRET_KEY is required");
  const message = problems({
    ...base,
    WEBHOOK_SECRET_KEY: "not-a-key",
    WEBHOOK_RETRY_SCHEDULE: "0,soon",
    WEBHOOK_TIMEOUT_MS: "abc",
  });
  expect(message).toContain("WEBHOOK_SECRET_KEY must be 32 bytes");
  expect(message).toContain("WEBHOOK_RETRY_SCHEDULE must be a comma-separated list");
  expect(message).toContain("WEBHOOK_TIMEOUT_MS must be an integer");
  expect(message).not.toContain("not-a-key");
});

test("webhooks: in production the secret key and PUBLIC_BASE_URL (the base of the URLs in event data) are required", () => {
  const { WEBHOOK_SECRET_KEY: _, ...withoutKey } = base;
  const message = problems({ ...withoutKey, NODE_ENV: "production" });
  expect(message).toContain("WEBHOOK_SECRET_KEY is required");
  expect(message).toContain("PUBLIC_BASE_URL is required when NODE_ENV=production");
});
