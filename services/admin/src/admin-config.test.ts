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

  test("backup and restore read the media store the services use: the S3 bucket and prefix, or MEDIA_DIR with MEDIA_STORAGE=local", () => {
    const s3 = {
      DATABASE_URL: "postgres://a@b/c",
      S3_ENDPOINT: "http://s3.internal:9000",
      S3_BUCKET: "media",
      S3_ACCESS_KEY_ID: "id",
      S3_SECRET_ACCESS_KEY: "s3-topsecret",
      S3_PREFIX: "prod/",
    };
    const fromS3 = loadAdminConfig(s3, ["postgres"], undefined, { mediaStore: true });
    expect(fromS3.mediaStore).toMatchObject({ kind: "s3", bucket: "media", prefix: "prod/" });
    const fromDir = loadAdminConfig(
      { DATABASE_URL: "postgres://a@b/c", MEDIA_STORAGE: "local", MEDIA_DIR: "/srv/media" },
      ["postgres"],
      undefined,
      { mediaStore: true },
    );
    expect(fromDir.mediaStore).toEqual({ kind: "local", dir: "/srv/media" });
    expect(() =>
      loadAdminConfig({ DATABASE_URL: "postgres://a@b/c" }, ["postgres"], undefined, { mediaStore: true }),
    ).toThrow(/S3_BUCKET is required/);
  });

  test("backup --with-webhook-key reads the webhook key as the services do, and says how to go without it", () => {
    const key = "a".repeat(64);
    const signing = "b".repeat(64);
    const config = loadAdminConfig(
      {
        DATABASE_URL: "postgres://a@b/c",
        WEBHOOK_SECRET_KEY: key,
        BACKUP_SIGNING_KEY: signing,
        MEDIA_STORAGE: "local",
      },
      ["postgres"],
      undefined,
      { mediaStore: true, webhookKey: true, backupSigningKey: true },
    );
    expect(config.webhookKey?.toString("hex")).toBe(key);
    expect(config.backupSigningKey?.toString("hex")).toBe(signing);
    expect(() =>
      loadAdminConfig(
        { DATABASE_URL: "postgres://a@b/c", MEDIA_STORAGE: "local", BACKUP_SIGNING_KEY: signing },
        ["postgres"],
        undefined,
        { mediaStore: true, webhookKey: true, backupSigningKey: true },
      ),
    ).toThrow(/WEBHOOK_SECRET_KEY or WEBHOOK_SECRET_KEY_FILE .* or leave the flag out/);
  });

  test("backup and restore need a signing key of their own: required, and never the webhook key", () => {
    const reads = { mediaStore: true, backupSigningKey: true };
    const env = { DATABASE_URL: "postgres://a@b/c", MEDIA_STORAGE: "local" };
    expect(() => loadAdminConfig(env, ["postgres"], undefined, reads)).toThrow(
      /BACKUP_SIGNING_KEY or BACKUP_SIGNING_KEY_FILE is required to make or restore a backup/,
    );
    const key = "c".repeat(64);
    expect(() =>
      loadAdminConfig({ ...env, BACKUP_SIGNING_KEY: key, WEBHOOK_SECRET_KEY: key }, ["postgres"], undefined, {
        ...reads,
        webhookKey: true,
      }),
    ).toThrow(/BACKUP_SIGNING_KEY is the webhook secret key/);
  });
});
