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

test("api: MEDIA_STORAGE=s3 needs its bucket and credentials, and redirect delivery needs object storage", () => {
  const message = bootMessage(() =>
    loadConfig({ ...minimal, MEDIA_STORAGE: "s3", S3_SECRET_ACCESS_KEY: "s3-topsecret" }),
  );
  expect(message).toContain("S3_BUCKET is required");
  expect(message).toContain("S3_ACCESS_KEY_ID is required");
  expect(message).not.toContain("topsecret");
  expect(bootMessage(() => loadConfig({ ...minimal, MEDIA_DELIVERY: "redirect" }))).toContain(
    "MEDIA_DELIVERY=redirect needs MEDIA_STORAGE=s3",
  );
  const config = loadConfig({
    ...minimal,
    MEDIA_STORAGE: "s3",
    S3_ENDPOINT: "http://s3:80/",
    S3_BUCKET: "b",
    S3_ACCESS_KEY_ID: "k",
    S3_SECRET_ACCESS_KEY: "s",
    MEDIA_DELIVERY: "redirect",
  });
  expect(config.mediaStorage).toMatchObject({
    kind: "s3",
    endpoint: "http://s3:80",
    bucket: "b",
    region: "us-east-1",
    forcePathStyle: true,
    prefix: "",
  });
  expect(config.mediaDelivery).toBe("redirect");
  expect(loadConfig(minimal).mediaStorage).toEqual({ kind: "local", dir: ".data/media" });
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

test("api: TRUST_PROXY_CIDRS lists the trusted proxies' ranges (none by default); the old TRUST_PROXY and a bad range stop the boot", () => {
  expect(loadConfig(minimal).trustedProxies.ranges).toEqual([]);
  const trusted = loadConfig({ ...minimal, TRUST_PROXY_CIDRS: "10.0.0.0/8, fd00::/8" }).trustedProxies;
  expect(trusted.ranges).toEqual(["10.0.0.0/8", "fd00::/8"]);
  expect([trusted.trusts("10.1.2.3"), trusted.trusts("192.0.2.1")]).toEqual([true, false]);
  const message = bootMessage(() =>
    loadConfig({ ...minimal, TRUST_PROXY: "true", TRUST_PROXY_CIDRS: "10.0.0.0/8,nope" }),
  );
  expect(message).toContain("TRUST_PROXY is replaced by TRUST_PROXY_CIDRS");
  expect(message).toContain("TRUST_PROXY_CIDRS: 'nope' is not an address range");
});

test("api: the per-listing lead limit is gone (it told an owner of others' inquiries); its variable stops the boot, naming what replaced it", () => {
  const config = loadConfig(minimal);
  expect([config.leadRateLimitPerAddress, config.leadRateLimitPerListingAddress]).toEqual([20, 5]);
  expect(config.leadRateLimitGlobalPerMinute).toBe(300);
  expect(bootMessage(() => loadConfig({ ...minimal, LEAD_RATE_LIMIT_PER_LISTING: "60" }))).toContain(
    "LEAD_RATE_LIMIT_PER_LISTING is replaced by LEAD_RATE_LIMIT_PER_LISTING_ADDRESS and LEAD_RATE_LIMIT_GLOBAL_PER_MINUTE",
  );
});
