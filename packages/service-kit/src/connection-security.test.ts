import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresConnection } from "./clients.ts";
import {
  ConfigError,
  createEnvReader,
  readKafkaConfig,
  readOpenSearchConfig,
  readPostgresConfig,
  readRedisConfig,
  type EnvReader,
} from "./config.ts";
import { kafkaConnection } from "./kafka-client.ts";

const dir = mkdtempSync(join(tmpdir(), "pss-tls-config-"));
const pem = (name: string, body = "MIIB") => {
  const path = join(dir, name);
  writeFileSync(path, `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`);
  return path;
};
const CA = pem("ca.pem");

function read<T>(env: Record<string, string>, reader: (r: EnvReader) => T): { value: T; problems: string[] } {
  const r = createEnvReader(env);
  const value = reader(r);
  try {
    r.done();
    return { value, problems: [] };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { value, problems: err.problems };
  }
}

describe("PostgreSQL TLS from DATABASE_URL", () => {
  test("sslmode and sslrootcert are taken out of the URL (the client would send them to the server as settings)", () => {
    const { value, problems } = read(
      {
        DATABASE_URL: `postgres://app:pw@db.internal:5432/pss?sslmode=verify-full&sslrootcert=${CA}&application_name=x`,
      },
      (r) => readPostgresConfig(r),
    );
    expect(problems).toEqual([]);
    expect(value.url).toBe("postgres://app:pw@db.internal:5432/pss?application_name=x");
    expect(value.tls).toEqual({ mode: "verify-full", files: { caFile: CA }, systemRoots: false });
  });

  test("DATABASE_TLS_CA_FILE wins over sslrootcert; a URL without TLS parameters is left as it was", () => {
    const other = pem("other.pem");
    const { value } = read(
      { DATABASE_URL: `postgres://app:pw@db/pss?sslmode=verify-ca&sslrootcert=${CA}`, DATABASE_TLS_CA_FILE: other },
      (r) => readPostgresConfig(r),
    );
    expect(value.tls?.files.caFile).toBe(other);
    const plain = read({ DATABASE_URL: "postgres://app:pw@db/pss" }, (r) => readPostgresConfig(r)).value;
    expect(plain.url).toBe("postgres://app:pw@db/pss");
    expect(plain.tls?.mode).toBeNull();
  });

  test("an unknown sslmode, a missing CA file, or TLS files without sslmode are refused at boot", () => {
    expect(
      read({ DATABASE_URL: "postgres://a:b@db/pss?sslmode=verify" }, (r) => readPostgresConfig(r)).problems,
    ).toEqual([
      "DATABASE_URL's sslmode must be one of disable, allow, prefer, require, verify-ca, verify-full, got 'verify'",
    ]);
    expect(
      read(
        { DATABASE_URL: "postgres://a:b@db/pss?sslmode=verify-full", DATABASE_TLS_CA_FILE: join(dir, "missing.pem") },
        (r) => readPostgresConfig(r),
      ).problems,
    ).toEqual([`DATABASE_TLS_CA_FILE=${join(dir, "missing.pem")}: no such file`]);
    expect(
      read({ DATABASE_URL: "postgres://a:b@db/pss", DATABASE_TLS_CA_FILE: CA }, (r) => readPostgresConfig(r))
        .problems[0],
    ).toContain("add ?sslmode=verify-full");
  });

  test("each sslmode becomes the client's TLS options as libpq means it", () => {
    const conn = (mode: string, caFile?: string) =>
      postgresConnection({
        url: "postgres://a:b@db.example.com/pss",
        tls: { mode: mode as "require", files: caFile ? { caFile } : {}, systemRoots: false },
      }).ssl as Record<string, unknown> | string | boolean;
    expect(conn("disable")).toBe(false);
    expect(conn("prefer")).toBe("prefer");
    expect(conn("require")).toMatchObject({ rejectUnauthorized: false });
    // require with a CA file verifies the chain, like libpq.
    expect(conn("require", CA)).toMatchObject({ rejectUnauthorized: true });
    const verifyCa = conn("verify-ca", CA) as { ca: string; checkServerIdentity: () => unknown };
    expect(verifyCa.ca).toContain("BEGIN CERTIFICATE");
    expect(verifyCa.checkServerIdentity()).toBeUndefined();
    const full = conn("verify-full", CA) as { checkServerIdentity: (h: string, c: unknown) => Error | undefined };
    // The host checked is the URL's, whatever name the TLS layer passes.
    const cert = { subject: { CN: "other.example.com" }, subjectaltname: "DNS:other.example.com" };
    expect(full.checkServerIdentity("localhost", cert)?.message).toContain("db.example.com");
    expect(
      full.checkServerIdentity("x", { subject: { CN: "db" }, subjectaltname: "DNS:db.example.com" }),
    ).toBeUndefined();
  });
});

describe("Redis and OpenSearch credentials and TLS", () => {
  test("credentials leave the URL and REDIS_PASSWORD wins over the URL's", () => {
    const { value } = read(
      { REDIS_URL: "rediss://app:fromurl@cache.internal:6380", REDIS_PASSWORD: "fromsecret", REDIS_TLS_CA_FILE: CA },
      (r) => readRedisConfig(r),
    );
    expect(value).toEqual({
      url: "rediss://cache.internal:6380",
      username: "app",
      password: "fromsecret",
      tls: { caFile: CA },
    });
  });

  test("TLS files with a plaintext URL are refused", () => {
    expect(
      read({ REDIS_URL: "redis://cache:6379", REDIS_TLS_CA_FILE: CA }, (r) => readRedisConfig(r)).problems,
    ).toEqual(["REDIS_TLS_*_FILE are set but REDIS_URL is redis://: use rediss://"]);
    expect(
      read({ OPENSEARCH_URL: "http://search:9200", OPENSEARCH_TLS_CA_FILE: CA }, (r) => readOpenSearchConfig(r))
        .problems,
    ).toEqual(["OPENSEARCH_TLS_*_FILE are set but OPENSEARCH_URL is http://: use https://"]);
  });

  test("OpenSearch basic authentication from variables, over https", () => {
    const { value, problems } = read(
      { OPENSEARCH_URL: "https://search.internal:9200", OPENSEARCH_USERNAME: "pss", OPENSEARCH_PASSWORD: "pw" },
      (r) => readOpenSearchConfig(r),
    );
    expect(problems).toEqual([]);
    expect(value).toEqual({ url: "https://search.internal:9200", username: "pss", password: "pw", tls: {} });
    expect(
      read({ OPENSEARCH_URL: "https://search:9200", OPENSEARCH_USERNAME: "pss" }, (r) => readOpenSearchConfig(r))
        .problems[0],
    ).toContain("needs both a user name and a password");
  });
});

describe("Kafka TLS, SASL and replication", () => {
  const base = { KAFKA_BROKERS: "b-1.msk.example.com:9096,b-2.msk.example.com:9096" };

  test("SCRAM over TLS with the system's CAs: what MSK and Confluent Cloud need", () => {
    const { value, problems } = read(
      {
        ...base,
        KAFKA_TLS: "true",
        KAFKA_SASL_MECHANISM: "scram-sha-512",
        KAFKA_SASL_USERNAME: "pss",
        KAFKA_SASL_PASSWORD: "pw",
        KAFKA_REPLICATION_FACTOR: "3",
        KAFKA_MIN_INSYNC_REPLICAS: "2",
      },
      (r) => readKafkaConfig(r, "test"),
    );
    expect(problems).toEqual([]);
    expect(value.security).toEqual({
      tls: {},
      sasl: { mechanism: "scram-sha-512", username: "pss", password: "pw" },
    });
    expect(value.topics).toMatchObject({ replicationFactor: 3, minInsyncReplicas: 2 });
    const connection = kafkaConnection(value);
    expect(connection.ssl).toEqual({});
    expect(connection.sasl).toEqual({ mechanism: "scram-sha-512", username: "pss", password: "pw" });
  });

  test("a CA file turns TLS on; a client certificate needs its key", () => {
    const cert = pem("client.pem");
    const { value, problems } = read({ ...base, KAFKA_TLS_CA_FILE: CA, KAFKA_TLS_CERT_FILE: cert }, (r) =>
      readKafkaConfig(r, "test"),
    );
    expect(value.security?.tls).toEqual({ caFile: CA, certFile: cert });
    expect(problems).toEqual([
      "KAFKA_TLS_CERT_FILE and KAFKA_TLS_KEY_FILE go together (a client certificate needs its key)",
    ]);
  });

  test("production creates topics with 3 copies and min.insync.replicas 2 unless told otherwise", () => {
    expect(read({ ...base, NODE_ENV: "production" }, (r) => readKafkaConfig(r, "t")).value.topics).toMatchObject({
      replicationFactor: 3,
      minInsyncReplicas: 2,
    });
    expect(read(base, (r) => readKafkaConfig(r, "t")).value.topics.minInsyncReplicas).toBeUndefined();
  });

  test("an unknown mechanism, missing SASL credentials and min.insync.replicas above the replicas are refused", () => {
    expect(read({ ...base, KAFKA_SASL_MECHANISM: "gssapi" }, (r) => readKafkaConfig(r, "t")).problems).toEqual([
      "KAFKA_SASL_MECHANISM must be one of none, plain, scram-sha-256, scram-sha-512, got 'gssapi'",
    ]);
    expect(read({ ...base, KAFKA_SASL_MECHANISM: "plain" }, (r) => readKafkaConfig(r, "t")).problems).toEqual([
      "KAFKA_SASL_USERNAME is required",
      "KAFKA_SASL_PASSWORD is required",
    ]);
    expect(
      read({ ...base, KAFKA_REPLICATION_FACTOR: "1", KAFKA_MIN_INSYNC_REPLICAS: "2" }, (r) => readKafkaConfig(r, "t"))
        .problems[0],
    ).toContain("must not exceed KAFKA_REPLICATION_FACTOR");
  });
});

describe("production refuses credentials sent in plaintext to another host", () => {
  const production = { NODE_ENV: "production" };
  const cases: [string, Record<string, string>, (r: EnvReader) => unknown, string][] = [
    ["a password in a redis:// URL", { REDIS_URL: "redis://:pw@cache.internal:6379" }, readRedisConfig, "REDIS_URL"],
    [
      "OpenSearch credentials over http://",
      { OPENSEARCH_URL: "http://search.internal:9200", OPENSEARCH_USERNAME: "u", OPENSEARCH_PASSWORD: "p" },
      readOpenSearchConfig,
      "OPENSEARCH_URL",
    ],
    [
      "a SASL mechanism without TLS",
      {
        KAFKA_BROKERS: "kafka.internal:9092",
        KAFKA_SASL_MECHANISM: "scram-sha-256",
        KAFKA_SASL_USERNAME: "u",
        KAFKA_SASL_PASSWORD: "p",
      },
      (r) => readKafkaConfig(r, "t"),
      "KAFKA_TLS",
    ],
  ];

  for (const [what, env, reader, variable] of cases) {
    test(`${what}: one line naming the setting and the host; accepted on loopback, outside production, or with ${variable}_I_UNDERSTAND`, () => {
      const { problems } = read({ ...production, ...env }, reader);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toStartWith(`${variable}=`);
      expect(problems[0]).toMatch(/in plaintext to [a-z.]+\.internal, refused with NODE_ENV=production/);
      expect(problems[0]).toContain(`set ${variable}_I_UNDERSTAND=true if that network is trusted`);
      expect(problems[0]).not.toContain("pw");
      expect(read(env, reader).problems).toEqual([]);
      const overridden = createEnvReader({ ...production, ...env, [`${variable}_I_UNDERSTAND`]: "true" });
      reader(overridden);
      expect(() => overridden.done()).not.toThrow();
      // Accepted, and said at boot.
      expect(overridden.accepted()).toEqual([expect.stringContaining(`(accepted by ${variable}_I_UNDERSTAND=true)`)]);
      const loopback = Object.fromEntries(
        Object.entries(env).map(([k, v]) => [k, v.replace(/[a-z.]+\.internal/, "127.0.0.1")]),
      );
      expect(read({ ...production, ...loopback }, reader).problems).toEqual([]);
    });
  }

  test("the same credentials over TLS are accepted", () => {
    expect(read({ ...production, REDIS_URL: "rediss://:pw@cache.internal:6380" }, readRedisConfig).problems).toEqual(
      [],
    );
    expect(
      read(
        {
          ...production,
          KAFKA_BROKERS: "kafka.internal:9093",
          KAFKA_TLS: "true",
          KAFKA_SASL_MECHANISM: "plain",
          KAFKA_SASL_USERNAME: "u",
          KAFKA_SASL_PASSWORD: "p",
        },
        (r) => readKafkaConfig(r, "t"),
      ).problems,
    ).toEqual([]);
  });
});
