// NODE_ENV=production refuses to boot with a development default (packages/service-kit/src/production-safety.ts),
// one line per problem; the compose file's defaults are exactly such defaults, so `docker compose up` without a
// production .env runs the development profile and says so, and with NODE_ENV=production it refuses to start.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "@pss/service-kit";
import {
  loadConfig as loadApiConfig,
  loadRelayConfig,
  PRODUCTION_RATE_LIMIT_PER_MINUTE,
} from "../../services/api/src/config.ts";
import { loadConfig as loadIndexerConfig } from "../../services/indexer/src/config.ts";
import { loadConfig as loadLeadsConfig } from "../../services/leads/src/config.ts";
import { loadConfig as loadMarketplaceConfig } from "../../services/marketplace/src/config.ts";
import { loadConfig as loadMediaConfig } from "../../services/media/src/config.ts";
import { loadConfig as loadWebhooksConfig } from "../../services/webhooks/src/config.ts";
import { loadConfig as loadPortalConfig } from "../../services/portal/src/config.ts";
import { TEST_WEBHOOK_SECRET_KEY } from "../support/env.ts";
import { readmeConfigurationVariables } from "../support/readme-configuration.ts";

type Env = Record<string, string | undefined>;
const compose = readFileSync(join(import.meta.dir, "..", "..", "docker-compose.yml"), "utf8");

/** The value compose substitutes for ${NAME:-default} when .env does not set NAME. */
function composeDefault(name: string): string {
  const match = new RegExp(`\\$\\{${name}:-([^}]*)\\}`).exec(compose);
  if (!match) throw new Error(`docker-compose.yml has no default for ${name}`);
  return match[1]!;
}

// What the services get from docker-compose.yml with no .env at all (the development profile's values).
const composeDefaults: Env = {
  DATABASE_URL: `postgres://pss:${composeDefault("POSTGRES_PASSWORD")}@postgres:5432/pss`,
  REDIS_URL: "redis://redis:6379",
  KAFKA_BROKERS: "kafka:9092",
  OPENSEARCH_URL: "http://opensearch:9200",
  PUBLIC_BASE_URL: composeDefault("PUBLIC_BASE_URL"),
  MEDIA_STORAGE: "s3",
  S3_ENDPOINT: composeDefault("S3_ENDPOINT"),
  S3_BUCKET: composeDefault("S3_BUCKET"),
  S3_ACCESS_KEY_ID: composeDefault("S3_ACCESS_KEY_ID"),
  S3_SECRET_ACCESS_KEY: composeDefault("S3_SECRET_ACCESS_KEY"),
  SMTP_HOST: composeDefault("SMTP_HOST"),
  SMTP_PORT: composeDefault("SMTP_PORT"),
  SMTP_FROM: composeDefault("SMTP_FROM"),
  // The compose file generates a random key into a volume; the tests' published key is the known default here.
  WEBHOOK_SECRET_KEY: TEST_WEBHOOK_SECRET_KEY,
};

const productionValues: Env = {
  ...composeDefaults,
  NODE_ENV: "production",
  DATABASE_URL: "postgres://pss:9f2c-own-secret@postgres:5432/pss",
  PUBLIC_BASE_URL: "https://market.example.com",
  S3_SECRET_ACCESS_KEY: "own-s3-secret-31c5",
  SMTP_HOST: "smtp.example.com",
  WEBHOOK_SECRET_KEY: Buffer.alloc(32, 7).toString("base64"),
};

const LOOPBACK = "PUBLIC_BASE_URL is a loopback address";
const DB = "DATABASE_URL uses a development password";
const S3 = "S3_SECRET_ACCESS_KEY is a development default";
const KEY = "WEBHOOK_SECRET_KEY is a development default";
const SINK = "SMTP_HOST=smtp-sink is a development mail sink";

/** Each service, what it reads, and so what it must refuse in production with the compose defaults. */
const SERVICES: {
  name: string;
  load: (env: Env) => { developmentProfile: string | null };
  refuses: string[];
  /** Whether it connects to Kafka (the marketplace writes events through the outbox only; the portal reads no Kafka). */
  kafka?: false;
}[] = [
  { name: "api", load: loadApiConfig, refuses: [LOOPBACK, DB, KEY] },
  { name: "marketplace", load: loadMarketplaceConfig, refuses: [LOOPBACK, DB, S3], kafka: false },
  { name: "outbox-relay", load: loadRelayConfig, refuses: [DB] },
  { name: "indexer", load: loadIndexerConfig, refuses: [DB] },
  { name: "leads", load: loadLeadsConfig, refuses: [LOOPBACK, DB, SINK] },
  { name: "media", load: loadMediaConfig, refuses: [DB, S3] },
  { name: "webhooks", load: loadWebhooksConfig, refuses: [LOOPBACK, DB, KEY] },
  { name: "portal", load: loadPortalConfig, refuses: [LOOPBACK, DB, KEY, SINK], kafka: false },
];

function problemsOf(load: () => unknown): string[] {
  try {
    load();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe("NODE_ENV=production with the compose file's development defaults", () => {
  for (const s of SERVICES)
    test(`${s.name} refuses to boot, one line for each default it reads`, () => {
      const problems = problemsOf(() => s.load({ ...composeDefaults, NODE_ENV: "production" }));
      for (const expected of s.refuses) expect(problems.filter((p) => p.startsWith(expected))).toHaveLength(1);
      expect(problems).toHaveLength(s.refuses.length);
      for (const p of problems) expect(p).not.toContain("\n");
    });

  test("a loopback address in any spelling is refused as PUBLIC_BASE_URL; a public one is kept", () => {
    for (const url of ["http://127.0.0.2:8080", "http://[::1]:8080", "http://app.localhost", "http://0.0.0.0"])
      expect(problemsOf(() => loadWebhooksConfig({ ...productionValues, PUBLIC_BASE_URL: url }))).toEqual([
        expect.stringContaining(LOOPBACK),
      ]);
    expect(loadWebhooksConfig(productionValues).publicBaseUrl).toBe("https://market.example.com");
  });

  test("the portal refuses no mail relay in production (nobody could sign in), a sink, and a loopback PORTAL_URL", () => {
    expect(problemsOf(() => loadPortalConfig({ ...productionValues, SMTP_HOST: undefined }))).toEqual([
      expect.stringContaining("SMTP_HOST is required with NODE_ENV=production: without it nobody can sign in"),
    ]);
    expect(problemsOf(() => loadPortalConfig({ ...productionValues, SMTP_HOST: "mailpit" }))).toEqual([
      expect.stringContaining("SMTP_HOST=mailpit is a development mail sink"),
    ]);
    expect(
      problemsOf(() => loadPortalConfig({ ...productionValues, PORTAL_URL: "http://127.0.0.1:8090/portal" })),
    ).toEqual([expect.stringContaining("PORTAL_URL is a loopback address")]);
    expect(loadPortalConfig(productionValues).portalUrl).toBe("https://market.example.com/portal");
  });

  test("leads refuses no mail relay at all in production (leads would only wait), and any known sink", () => {
    expect(problemsOf(() => loadLeadsConfig({ ...productionValues, SMTP_HOST: undefined }))).toEqual([
      expect.stringContaining("SMTP_HOST is required with NODE_ENV=production"),
    ]);
    expect(problemsOf(() => loadLeadsConfig({ ...productionValues, SMTP_HOST: "mailpit" }))).toEqual([
      expect.stringContaining("SMTP_HOST=mailpit is a development mail sink"),
    ]);
  });
});

describe("Kafka's copies of every event under NODE_ENV=production", () => {
  const copies = (env: Env) => loadIndexerConfig(env).kafka.topics.replicationFactor;

  test("production keeps 3 copies unless told otherwise; development 1", () => {
    expect(copies(productionValues)).toBe(3);
    expect(copies({ ...composeDefaults, NODE_ENV: "development" })).toBe(1);
    expect(copies({ ...productionValues, KAFKA_REPLICATION_FACTOR: "5" })).toBe(5);
  });

  test("fewer than 3 is refused by every service with one line naming the override, and accepted with it", () => {
    for (const s of SERVICES.filter((x) => x.kafka !== false))
      expect([s.name, problemsOf(() => s.load({ ...productionValues, KAFKA_REPLICATION_FACTOR: "1" }))]).toEqual([
        s.name,
        [
          "KAFKA_REPLICATION_FACTOR=1 keeps fewer than 3 copies of every event (a lost broker loses acknowledged events), refused with NODE_ENV=production: unset it, or set KAFKA_REPLICATION_FACTOR_I_UNDERSTAND=true to run so on purpose",
        ],
      ]);
    expect(
      copies({ ...productionValues, KAFKA_REPLICATION_FACTOR: "2", KAFKA_REPLICATION_FACTOR_I_UNDERSTAND: "true" }),
    ).toBe(2);
    expect(copies({ ...composeDefaults, NODE_ENV: "development", KAFKA_REPLICATION_FACTOR: "1" })).toBe(1);
  });
});

describe("the development profile and a real production configuration", () => {
  for (const s of SERVICES)
    test(`${s.name}: compose's defaults boot as development and say so; production values boot silently`, () => {
      const dev = s.load({ ...composeDefaults, NODE_ENV: "development" });
      expect(dev.developmentProfile).toContain("development profile (NODE_ENV=development)");
      expect(s.load({ ...composeDefaults, NODE_ENV: undefined }).developmentProfile).toContain("NODE_ENV=unset");
      expect(s.load(productionValues).developmentProfile).toBeNull();
    });

  test("compose runs the development profile unless .env sets NODE_ENV, and passes each production setting through", () => {
    expect(composeDefault("NODE_ENV")).toBe("development");
    const example = readFileSync(join(import.meta.dir, "..", "..", ".env.example"), "utf8");
    const exampleNames = [...example.matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!);
    expect(exampleNames).toContain("NODE_ENV");
    // Every variable .env.example offers reaches the containers (a ${NAME...} substitution in the compose file).
    for (const name of exampleNames) expect(compose).toContain(`\${${name}:-`);
  });

  test(".env.example offers every setting of the README's configuration table, and compose hands .env to every app container", () => {
    const example = readFileSync(join(import.meta.dir, "..", "..", ".env.example"), "utf8");
    // A setting line, or a commented one at its default (`# NAME=value`) for the operator to uncomment.
    const offered = new Set([...example.matchAll(/^(?:#\s*)?([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!));
    // The ones compose sets per container, which .env.example names in its "Not here" paragraph.
    const notHere = /# Not here,[\s\S]*?\n(?!#)/.exec(example)?.[0] ?? "";
    const fixedByCompose = new Set([...notHere.matchAll(/\b([A-Z][A-Z0-9_]{3,})\b/g)].map((m) => m[1]!));
    const missing = [...readmeConfigurationVariables()].filter((n) => !offered.has(n) && !fixedByCompose.has(n));
    expect(missing).toEqual([]);
    expect(fixedByCompose.has("API_PORT")).toBe(true);
    // Every service built from the app image reads .env (when there is one), so an uncommented line reaches it.
    const parsed = Bun.YAML.parse(compose) as {
      services: Record<string, { image?: string; env_file?: { path: string; required: boolean }[] }>;
    };
    const appServices = Object.entries(parsed.services).filter(
      ([, s]) => s.image?.includes("PSS_IMAGE") || s.image?.startsWith("partner-syndication-service"),
    );
    expect(appServices.map(([name]) => name)).toContain("leads");
    for (const [name, s] of appServices)
      expect({ name, env_file: s.env_file }).toEqual({ name, env_file: [{ path: ".env", required: false }] });
  });
});

// Issue 37, item 8: each refusal holds whatever the spelling, and a setting that switches a protection off needs
// its explicit `<VARIABLE>_I_UNDERSTAND=true` in production.
describe("NODE_ENV=production refusals cannot be sidestepped", () => {
  test("a loopback PUBLIC_BASE_URL in any notation is refused: IPv4-mapped IPv6 (dotted or hex, compressed or not), IPv4 shorthands, ::1 written out", () => {
    for (const url of [
      "http://[::ffff:127.0.0.1]:8080",
      "http://[::ffff:7f00:1]:8080",
      "http://[0:0:0:0:0:ffff:7f00:1]",
      "http://[0000:0000:0000:0000:0000:ffff:127.0.0.9]",
      "http://[::ffff:0.0.0.0]",
      "http://[::127.0.0.1]",
      "http://[0:0:0:0:0:0:0:1]",
      "http://127.1:8080",
      "http://2130706433",
      "http://0x7f.0.0.1",
      "http://LOCALHOST.:8080",
      "http://ip6-localhost",
    ])
      expect({
        url,
        problems: problemsOf(() => loadWebhooksConfig({ ...productionValues, PUBLIC_BASE_URL: url })),
      }).toEqual({
        url,
        problems: [expect.stringContaining(LOOPBACK)],
      });
    // Public addresses, IPv4-mapped included, are not loopback.
    for (const url of ["http://[::ffff:203.0.114.7]", "http://[2001:db9::1]", "https://localhost.example.com"])
      expect(loadWebhooksConfig({ ...productionValues, PUBLIC_BASE_URL: url }).publicBaseUrl).toBe(url);
  });

  test("the tests' published webhook key is refused whatever its encoding: base64 padded or not, base64url, hex in either case", () => {
    const key = Buffer.from(TEST_WEBHOOK_SECRET_KEY, "base64");
    expect(key.length).toBe(32);
    for (const written of [
      key.toString("base64"),
      key.toString("base64").replace(/=+$/, ""),
      key.toString("base64url"),
      key.toString("hex"),
      key.toString("hex").toUpperCase(),
      ` ${key.toString("hex")}\n`,
    ]) {
      expect(problemsOf(() => loadWebhooksConfig({ ...productionValues, WEBHOOK_SECRET_KEY: written }))).toEqual([
        expect.stringContaining(KEY),
      ]);
      expect(problemsOf(() => loadApiConfig({ ...productionValues, WEBHOOK_SECRET_KEY: written }))).toEqual([
        expect.stringContaining(KEY),
      ]);
    }
  });

  test("a mail sink is refused by any DNS label of SMTP_HOST, the chart's own <release>-smtp-sink Service included; a real relay is kept", () => {
    for (const host of [
      "mailpit.mail.svc.cluster.local",
      "mailpit.ns.svc.cluster.local.",
      "MailHog.tools",
      "pss-partner-syndication-service-smtp-sink",
      "pss-partner-syndication-service-smtp-sink.pss.svc.cluster.local",
      "mail.smtp4dev.internal",
      "relay-mailpit-smtp.mail",
    ])
      expect({ host, problems: problemsOf(() => loadLeadsConfig({ ...productionValues, SMTP_HOST: host })) }).toEqual({
        host,
        problems: [expect.stringContaining(`SMTP_HOST=${host} is a development mail sink`)],
      });
    for (const host of ["smtp.example.com", "email-smtp.eu-west-1.amazonaws.com", "sinkhole-relay.example.com"])
      expect(loadLeadsConfig({ ...productionValues, SMTP_HOST: host }).smtp?.host).toBe(host);
  });

  test("the database's development password is refused however it is given: in the URL, percent-encoded, or as PGPASSWORD beside a URL without one", () => {
    for (const env of [
      { DATABASE_URL: "postgres://pss:%70%73%73@db.internal:5432/pss" },
      { DATABASE_URL: "postgres://pss@db.internal:5432/pss", PGPASSWORD: "pss" },
      { DATABASE_URL: "postgresql://app@db.internal/pss", PGPASSWORD: "postgres" },
    ])
      expect({ env, problems: problemsOf(() => loadIndexerConfig({ ...productionValues, ...env })) }).toEqual({
        env,
        problems: [expect.stringContaining(DB)],
      });
    // A URL's own password is the one the client uses: PGPASSWORD beside it is not read.
    expect(
      problemsOf(() =>
        loadIndexerConfig({
          ...productionValues,
          DATABASE_URL: "postgres://pss:9f2c-own-secret@db.internal:5432/pss",
          PGPASSWORD: "pss",
        }),
      ),
    ).toEqual([]);
    expect(
      problemsOf(() =>
        loadIndexerConfig({
          ...productionValues,
          DATABASE_URL: "postgres://pss@db.internal:5432/pss",
          PGPASSWORD: "9f2c-own-secret",
        }),
      ),
    ).toEqual([]);
  });

  const SWITCHES: {
    variable: string;
    value: string;
    load: (env: Env) => { productionOverrides: readonly string[] };
    says: string;
    /** What else makes the setting a protection off (a password the plaintext connection would carry). */
    with?: Env;
  }[] = [
    { variable: "MEDIA_ALLOWED_HOSTS", value: "10.0.0.5:80", load: loadMediaConfig, says: "private-address check" },
    {
      variable: "WEBHOOK_ALLOWED_HOSTS",
      value: "10.0.0.5:80",
      load: loadWebhooksConfig,
      says: "private-address check",
    },
    { variable: "RATE_LIMIT_PER_MINUTE", value: "0", load: loadApiConfig, says: "rate limit" },
    { variable: "LEAD_RATE_LIMIT_PER_ADDRESS", value: "0", load: loadMarketplaceConfig, says: "abuse limit" },
    { variable: "LEAD_RATE_LIMIT_PER_LISTING_ADDRESS", value: "0", load: loadMarketplaceConfig, says: "abuse limit" },
    { variable: "LEAD_RATE_LIMIT_GLOBAL_PER_MINUTE", value: "0", load: loadMarketplaceConfig, says: "abuse limit" },
    { variable: "KAFKA_REPLICATION_FACTOR", value: "1", load: loadIndexerConfig, says: "copies of every event" },
    { variable: "PORTAL_SIGN_IN_LIMIT_PER_ADDRESS", value: "0", load: loadPortalConfig, says: "sign-in link limit" },
    { variable: "PORTAL_SIGN_IN_LIMIT_PER_EMAIL", value: "0", load: loadPortalConfig, says: "sign-in link limit" },
    // Trusting everyone's X-Forwarded-For: any client names its own address to the inquiry limits and views cap.
    { variable: "TRUST_PROXY_CIDRS", value: "0.0.0.0/0", load: loadMarketplaceConfig, says: "X-Forwarded-For" },
    { variable: "TRUST_PROXY_CIDRS", value: "::/0", load: loadMarketplaceConfig, says: "X-Forwarded-For" },
    // The portal's sign-in link limits per address count by the same client address.
    {
      variable: "TRUST_PROXY_CIDRS",
      value: "2000::/3",
      load: loadPortalConfig,
      says: "sign-in link limits per address",
    },
    // Issue 40: a credential sent without TLS to another host.
    {
      variable: "REDIS_URL",
      value: "redis://cache.internal:6379",
      with: { REDIS_PASSWORD: "s3cret-redis" },
      load: loadApiConfig,
      says: "the Redis password in plaintext to cache.internal",
    },
    {
      variable: "OPENSEARCH_URL",
      value: "http://search.internal:9200",
      with: { OPENSEARCH_USERNAME: "pss", OPENSEARCH_PASSWORD: "s3cret-search" },
      load: loadIndexerConfig,
      says: "the OpenSearch password in plaintext to search.internal",
    },
    {
      variable: "KAFKA_TLS",
      value: "false",
      with: {
        KAFKA_BROKERS: "kafka.internal:9092",
        KAFKA_SASL_MECHANISM: "scram-sha-512",
        KAFKA_SASL_USERNAME: "pss",
        KAFKA_SASL_PASSWORD: "s3cret-kafka",
      },
      load: loadIndexerConfig,
      says: "the Kafka SASL credentials (scram-sha-512) in plaintext to kafka.internal",
    },
  ];
  for (const s of SWITCHES)
    test(`${s.variable}=${s.value} switches a protection off: refused in production, one line naming ${s.variable}_I_UNDERSTAND; accepted with it, and logged at boot`, () => {
      const env = { ...productionValues, ...s.with, [s.variable]: s.value };
      const problems = problemsOf(() => s.load(env));
      expect(problems).toHaveLength(1);
      expect(problems[0]).not.toContain("s3cret");
      expect(problems[0]).toStartWith(`${s.variable}=${s.value} `);
      expect(problems[0]).toContain(s.says);
      expect(problems[0]).toContain(`${s.variable}_I_UNDERSTAND=true`);
      expect(problems[0]).not.toContain("\n");
      // A value that is not true does not count as understanding.
      expect(problemsOf(() => s.load({ ...env, [`${s.variable}_I_UNDERSTAND`]: "maybe" })).join()).toContain(
        `${s.variable}_I_UNDERSTAND must be true or false`,
      );
      const accepted = s.load({ ...env, [`${s.variable}_I_UNDERSTAND`]: "true" });
      expect(accepted.productionOverrides).toEqual([expect.stringContaining(`${s.variable}=${s.value}`)]);
      // Development takes it as before, without a word.
      expect(
        s.load({ ...composeDefaults, ...s.with, NODE_ENV: "development", [s.variable]: s.value }).productionOverrides,
      ).toEqual([]);
    });

  test("production without RATE_LIMIT_PER_MINUTE limits each key (a production default); development keeps it off", () => {
    expect(loadApiConfig(productionValues).rateLimitPerMinute).toBe(PRODUCTION_RATE_LIMIT_PER_MINUTE);
    expect(loadApiConfig({ ...composeDefaults, NODE_ENV: "development" }).rateLimitPerMinute).toBe(0);
    expect(loadApiConfig({ ...productionValues, RATE_LIMIT_PER_MINUTE: "600" }).rateLimitPerMinute).toBe(600);
  });

  test("a production boot with a sidestep exits 1 before touching any server, one line for each; with its override it boots and logs it once", async () => {
    const root = join(import.meta.dir, "..", "..");
    const base: Env = {
      ...productionValues,
      // Unreachable servers: the refusal comes first, so nothing is ever connected to.
      DATABASE_URL: "postgres://pss:9f2c-own-secret@127.0.0.1:1/pss",
      KAFKA_BROKERS: "127.0.0.1:1",
      REDIS_URL: "redis://127.0.0.1:1",
      OPENSEARCH_URL: "http://127.0.0.1:1",
      S3_ENDPOINT: "http://127.0.0.1:1",
      PATH: process.env.PATH,
      HOME: process.env.HOME,
    };
    const runs = await Promise.all(
      [
        {
          script: "services/api/src/main.ts",
          env: {
            PUBLIC_BASE_URL: "http://[::ffff:127.0.0.1]:8080",
            WEBHOOK_SECRET_KEY: Buffer.from(TEST_WEBHOOK_SECRET_KEY, "base64").toString("hex"),
            RATE_LIMIT_PER_MINUTE: "0",
          },
          lines: [LOOPBACK, KEY, "RATE_LIMIT_PER_MINUTE=0 "],
        },
        {
          script: "services/leads/src/main.ts",
          env: { SMTP_HOST: "mailpit.mail.svc.cluster.local" },
          lines: ["SMTP_HOST="],
        },
        {
          script: "services/webhooks/src/main.ts",
          env: { WEBHOOK_ALLOWED_HOSTS: "10.0.0.5:80" },
          lines: ["WEBHOOK_ALLOWED_HOSTS="],
        },
        {
          script: "services/media/src/main.ts",
          env: { MEDIA_ALLOWED_HOSTS: "10.0.0.5:80" },
          lines: ["MEDIA_ALLOWED_HOSTS="],
        },
      ].map(async (c) => {
        const env = Object.fromEntries(Object.entries({ ...base, ...c.env }).filter(([, v]) => v !== undefined));
        const proc = Bun.spawn([process.execPath, c.script], {
          cwd: root,
          env: env as Record<string, string>,
          stdout: "pipe",
          stderr: "pipe",
        });
        const timer = setTimeout(() => proc.kill(), 20_000);
        const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
        clearTimeout(timer);
        return { script: c.script, code, stderr, lines: c.lines };
      }),
    );
    for (const run of runs) {
      const problems = run.stderr
        .split("\n")
        .filter((l) => l.startsWith("  - "))
        .map((l) => l.slice(4));
      expect({ script: run.script, code: run.code }).toEqual({ script: run.script, code: 1 });
      expect({ script: run.script, problems: problems.length }).toEqual({
        script: run.script,
        problems: run.lines.length,
      });
      for (const line of run.lines) expect(problems.filter((p) => p.startsWith(line))).toHaveLength(1);
    }
    // With its override the same setting boots, and the service says so in its log, once.
    const media = Bun.spawn([process.execPath, "services/media/src/main.ts"], {
      cwd: root,
      env: Object.fromEntries(
        Object.entries({
          ...base,
          MEDIA_ALLOWED_HOSTS: "10.0.0.5:80",
          MEDIA_ALLOWED_HOSTS_I_UNDERSTAND: "true",
        }).filter(([, v]) => v !== undefined),
      ) as Record<string, string>,
      stdout: "pipe",
      stderr: "pipe",
    });
    const timer = setTimeout(() => media.kill(), 20_000);
    let logged = "";
    const reader = media.stdout.getReader();
    while (!logged.includes("production override:")) {
      const chunk = await reader.read();
      if (chunk.done) break;
      logged += new TextDecoder().decode(chunk.value);
    }
    media.kill();
    clearTimeout(timer);
    await media.exited;
    const warning = logged
      .split("\n")
      .filter((l) => l.includes("production override:"))
      .map((l) => JSON.parse(l) as { level: string; msg?: string; message?: string });
    expect(warning).toHaveLength(1);
    expect(warning[0]!.level).toBe("warn");
    expect(JSON.stringify(warning[0])).toContain(
      "production override: MEDIA_ALLOWED_HOSTS=10.0.0.5:80 switches off the private-address check for these hosts",
    );
  }, 60_000);
});
