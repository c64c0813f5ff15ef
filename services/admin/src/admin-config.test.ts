import { describe, expect, test } from "bun:test";
import { ConfigError } from "@pss/service-kit";
import { loadAdminConfig } from "./admin-config.ts";

const LOCAL = {
  DATABASE_URL: "postgres://pss:pss@127.0.0.1:55432/pss",
  REDIS_URL: "redis://127.0.0.1:56379",
  KAFKA_BROKERS: "127.0.0.1:59092",
  OPENSEARCH_URL: "http://127.0.0.1:9250",
};

describe("admin configuration", () => {
  test("with no URLs set, the local infrastructure's are used and reported as local", () => {
    const config = loadAdminConfig({}, ["postgres", "redis", "kafka", "opensearch"], LOCAL);
    expect(config.postgres.url).toBe(LOCAL.DATABASE_URL);
    expect(config.redis.url).toBe(LOCAL.REDIS_URL);
    expect(config.kafka.brokers).toEqual(["127.0.0.1:59092"]);
    expect(config.opensearch.url).toBe(LOCAL.OPENSEARCH_URL);
    expect(config.local).toEqual(["postgres", "redis", "kafka", "opensearch"]);
    expect(config.searchAlias).toBe("listings");
  });

  test("a URL that is set wins over the local one, and only the rest are local", () => {
    const config = loadAdminConfig(
      { DATABASE_URL: "postgres://ops@db.internal:5432/pss", KAFKA_BROKERS: " " },
      ["postgres", "kafka"],
      LOCAL,
    );
    expect(config.postgres.url).toBe("postgres://ops@db.internal:5432/pss");
    expect(config.kafka.brokers).toEqual(["127.0.0.1:59092"]);
    expect(config.local).toEqual(["kafka"]);
  });

  test("only the servers a command needs are read: partners commands do not need Kafka", () => {
    const config = loadAdminConfig({ DATABASE_URL: "postgres://a@b/c", KAFKA_BROKERS: "not validated here" }, [
      "postgres",
    ]);
    expect(config.local).toEqual([]);
    expect(config.postgres.maxConnections).toBe(2);
  });

  test("without a local runner, every needed URL is required and every problem is listed at once", () => {
    const err = (() => {
      try {
        loadAdminConfig({ OPENSEARCH_INDEX_ALIAS: "Bad Alias" }, ["postgres", "opensearch"]);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      "DATABASE_URL is required",
      "OPENSEARCH_URL is required",
      "OPENSEARCH_INDEX_ALIAS must be lower case letters, digits, '.', '_' or '-', got 'Bad Alias'",
    ]);
  });

  test("a malformed URL is refused without echoing its password", () => {
    expect(() => loadAdminConfig({ DATABASE_URL: "postgres://u:secret@" + "[bad" }, ["postgres"], LOCAL)).toThrow(
      /DATABASE_URL must be a URL/,
    );
    try {
      loadAdminConfig({ DATABASE_URL: "postgres://u:secret@[bad" }, ["postgres"], LOCAL);
    } catch (e) {
      expect(String((e as Error).message)).not.toContain("secret");
    }
  });
});
