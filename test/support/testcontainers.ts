// Test servers in throw-away containers, for machines with a Docker engine. Images come from the variables
// docker-compose.yml reads (PSS_POSTGRES_IMAGE, ...): the official images by default, or the ones `npm run images`
// built where no registry is reachable (npm test passes them), so tests see the same servers as the stack.
import {
  GenericContainer,
  RandomPortGenerator,
  Wait,
  getContainerRuntimeClient,
  type StartedTestContainer,
} from "testcontainers";
import { readComposeEnv } from "../../scripts/containers/compose-env.ts";
import { engineAnswers } from "../../scripts/containers/engine.ts";
import { imageFor } from "../../scripts/containers/image-variables.ts";

/** The environment's image variables, else those `npm run images` wrote to .env, else the official images. */
export function images(environment: Record<string, string | undefined> = process.env) {
  const env = { ...readComposeEnv(), ...environment };
  return {
    postgres: imageFor("PSS_POSTGRES_IMAGE", env),
    redis: imageFor("PSS_REDIS_IMAGE", env),
    kafka: imageFor("PSS_KAFKA_IMAGE", env),
    opensearch: imageFor("PSS_OPENSEARCH_IMAGE", env),
    s3: imageFor("PSS_S3_IMAGE", env),
  };
}

/** Labels every container started here with PSS_TEST_RUN (npm test removes what a run left behind by it). */
const runLabels = (): Record<string, string> =>
  process.env.PSS_TEST_RUN ? { "pss.test-run": process.env.PSS_TEST_RUN } : {};

/** The bucket and credentials docker-compose.yml gives its S3Proxy, reused here. */
export const CONTAINER_S3 = {
  S3_BUCKET: "pss-media",
  S3_REGION: "us-east-1",
  S3_ACCESS_KEY_ID: "pss",
  S3_SECRET_ACCESS_KEY: "pss-compose-secret",
} as const;

export interface ContainerUrls {
  DATABASE_URL: string;
  REDIS_URL: string;
  KAFKA_BROKERS: string;
  OPENSEARCH_URL: string;
  S3_ENDPOINT: string;
  S3_BUCKET: string;
  S3_REGION: string;
  S3_ACCESS_KEY_ID: string;
  S3_SECRET_ACCESS_KEY: string;
}

/**
 * True only when a Docker engine actually answers. Having the `docker` client installed is not enough
 * (this is the case on our Docker-less CI machines), so ask the engine, with a short timeout.
 */
export const dockerEngineAvailable = engineAnswers;

/** Starts PostgreSQL, Redis, Kafka, OpenSearch and S3Proxy in parallel and returns their URLs. */
export async function startWithTestcontainers(): Promise<{ urls: ContainerUrls; stop: () => Promise<void> }> {
  // Kafka hands clients the address it advertises, so that must be the address reachable from this
  // process: the engine's host plus a host port fixed before the container starts (a random mapping is
  // only known afterwards, too late for KAFKA_ADVERTISED_LISTENERS).
  // `localhost` may resolve to ::1 first in clients; the IPv4 loopback is what port bindings always cover.
  const runtimeHost = (await getContainerRuntimeClient()).info.containerRuntime.host;
  const host = runtimeHost === "localhost" ? "127.0.0.1" : runtimeHost;
  const kafkaHostPort = await new RandomPortGenerator().generatePort();
  const IMAGES = images();

  const results = await Promise.allSettled([
    new GenericContainer(IMAGES.postgres)
      .withLabels(runLabels())
      .withEnvironment({ POSTGRES_USER: "pss", POSTGRES_PASSWORD: "pss", POSTGRES_DB: "pss" })
      // Data only has to outlive the test run; tmpfs and no fsync keep it fast.
      .withTmpFs({ "/var/lib/postgresql/data": "rw" })
      .withCommand(["postgres", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"])
      .withExposedPorts(5432)
      // TCP, not the socket: the official image's init script runs a temporary server on the socket only.
      .withWaitStrategy(Wait.forSuccessfulCommand("pg_isready -h 127.0.0.1 -U pss -d pss"))
      .withStartupTimeout(120_000)
      .start(),
    new GenericContainer(IMAGES.redis)
      .withLabels(runLabels())
      .withExposedPorts(6379)
      .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
      .start(),
    new GenericContainer(IMAGES.kafka)
      .withLabels(runLabels())
      .withEnvironment({
        // Setting any KAFKA_* variable replaces the image's defaults, so this is the full KRaft config.
        // Clients use PLAINTEXT (advertised at the host port); the broker's own traffic uses BROKER,
        // which resolves inside the container.
        KAFKA_NODE_ID: "1",
        KAFKA_PROCESS_ROLES: "broker,controller",
        KAFKA_LISTENERS: "PLAINTEXT://:9092,BROKER://:9094,CONTROLLER://:9093",
        KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://${host}:${kafkaHostPort},BROKER://localhost:9094`,
        KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: "PLAINTEXT:PLAINTEXT,BROKER:PLAINTEXT,CONTROLLER:PLAINTEXT",
        KAFKA_INTER_BROKER_LISTENER_NAME: "BROKER",
        KAFKA_CONTROLLER_LISTENER_NAMES: "CONTROLLER",
        KAFKA_CONTROLLER_QUORUM_VOTERS: "1@localhost:9093",
        CLUSTER_ID: "hz-heW1Ur5cgQv-GjDwg8A",
        // As in production: services create their topics with explicit partition counts.
        KAFKA_AUTO_CREATE_TOPICS_ENABLE: "false",
        KAFKA_NUM_PARTITIONS: "1",
        KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: "1",
        KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: "1",
        KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: "1",
        KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: "0",
        KAFKA_HEAP_OPTS: "-Xms512m -Xmx512m",
      })
      .withExposedPorts({ container: 9092, host: kafkaHostPort })
      .withWaitStrategy(Wait.forLogMessage(/Kafka Server started/))
      .withStartupTimeout(120_000)
      .start(),
    new GenericContainer(IMAGES.opensearch)
      .withLabels(runLabels())
      .withEnvironment({
        "discovery.type": "single-node",
        DISABLE_SECURITY_PLUGIN: "true",
        DISABLE_INSTALL_DEMO_CONFIG: "true",
        OPENSEARCH_JAVA_OPTS: "-Xms512m -Xmx512m", // smaller heap than compose: test data is tiny
      })
      .withExposedPorts(9200)
      // 200 only once the cluster is at least yellow (408 until then).
      .withWaitStrategy(Wait.forHttp("/_cluster/health?wait_for_status=yellow&timeout=2s", 9200).forStatusCode(200))
      .withStartupTimeout(180_000)
      .start(),
    new GenericContainer(IMAGES.s3)
      .withLabels(runLabels())
      .withEnvironment({
        S3PROXY_AUTHORIZATION: "aws-v2-or-v4",
        S3PROXY_IDENTITY: CONTAINER_S3.S3_ACCESS_KEY_ID,
        S3PROXY_CREDENTIAL: CONTAINER_S3.S3_SECRET_ACCESS_KEY,
        S3PROXY_ENDPOINT: "http://0.0.0.0:80",
        JCLOUDS_PROVIDER: "filesystem-nio2",
        JCLOUDS_FILESYSTEM_BASEDIR: "/data",
      })
      // The bucket is a directory of the filesystem backend: created before the server starts.
      .withEntrypoint([
        "sh",
        "-c",
        `mkdir -p -m 700 /data/${CONTAINER_S3.S3_BUCKET} && exec /opt/s3proxy/run-docker-container.sh`,
      ])
      .withExposedPorts(80)
      .withWaitStrategy(Wait.forListeningPorts())
      .withStartupTimeout(120_000)
      .start(),
  ]);

  const started = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  const stop = async () => {
    await Promise.allSettled(started.map((c) => c.stop()));
  };
  const failures = results.flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
  if (failures.length > 0) {
    // Do not leave the ones that did start running (Ryuk would reap them, but only at process exit).
    await stop();
    throw new AggregateError(
      failures,
      `testcontainers: ${failures.length} of ${results.length} containers failed to start: ${failures.map(String).join("; ")}`,
    );
  }

  const [pg, redis, kafka, os, s3] = started as [
    StartedTestContainer,
    StartedTestContainer,
    StartedTestContainer,
    StartedTestContainer,
    StartedTestContainer,
  ];
  return {
    urls: {
      DATABASE_URL: `postgres://pss:pss@${pg.getHost()}:${pg.getMappedPort(5432)}/pss`,
      REDIS_URL: `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`,
      KAFKA_BROKERS: `${host}:${kafka.getMappedPort(9092)}`,
      OPENSEARCH_URL: `http://${os.getHost()}:${os.getMappedPort(9200)}`,
      S3_ENDPOINT: `http://${s3.getHost()}:${s3.getMappedPort(80)}`,
      ...CONTAINER_S3,
    },
    stop,
  };
}
