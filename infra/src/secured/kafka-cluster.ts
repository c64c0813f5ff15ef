// The secured profile's Kafka: three KRaft nodes (each broker and controller, as small production clusters run),
// SASL_SSL for clients and between brokers (SCRAM-SHA-512; the services may also use SCRAM-SHA-256 or PLAIN),
// the controller quorum over TLS, SCRAM credentials written into the metadata at format time, topics at
// replication factor 3 with min.insync.replicas 2 by default. Each node can be stopped, killed and started on its
// own: the replicated-cluster fault tests do (services/api/test/faults/replicated-kafka.test.ts).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Component, InfraPaths } from "../component.ts";
import { formatKafkaStorage, KAFKA_LOG4J, kafkaClusterReady, kafkaJvmArgs } from "../kafka.ts";
import { javaBinary, resolveJars } from "../maven.ts";
import { isPortOpen, readPid, removeFile, startDetached, stopPid } from "../process.ts";
import { type SecuredProfile, SECURED_USERS } from "./profile.ts";

export interface KafkaNode {
  id: number;
  /** Its SASL_SSL client listener: "127.0.0.1:<port>". */
  address: string;
  logFile: string;
  running(): boolean;
  start(): Promise<void>;
  /** SIGTERM: a controlled shutdown (leadership moves first), SIGKILL after 60 s. */
  stop(): Promise<void>;
  /** SIGKILL: the node is lost mid-work, as when its host dies. */
  kill(): Promise<void>;
}

export interface KafkaCluster extends Component {
  nodes: KafkaNode[];
  /** kafkajs settings of the services' user (TLS with the profile's CA, SCRAM-SHA-512). */
  clientConfig(): {
    brokers: string[];
    ssl: { ca: string[] };
    sasl: { mechanism: "scram-sha-512"; username: string; password: string };
  };
}

const pom = (paths: InfraPaths) => join(paths.root, "infra", "maven", "kafka", "pom.xml");

/** Every secured Kafka variable the services need (besides KAFKA_BROKERS). */
export function securedKafkaVariables(profile: SecuredProfile): Record<string, string> {
  return {
    KAFKA_TLS: "true",
    KAFKA_TLS_CA_FILE: profile.certs.caFile,
    KAFKA_SASL_MECHANISM: "scram-sha-512",
    KAFKA_SASL_USERNAME: SECURED_USERS.kafka,
    KAFKA_SASL_PASSWORD: profile.secrets.kafka,
    KAFKA_REPLICATION_FACTOR: "3",
    KAFKA_MIN_INSYNC_REPLICAS: "2",
  };
}

export function kafkaClusterComponent(paths: InfraPaths, profile: SecuredProfile): KafkaCluster {
  const base = join(profile.dir, "kafka");
  const { ports, certs, secrets } = profile;
  const voters = ports.kafkaControllers.map((p, i) => `${i + 1}@127.0.0.1:${p}`).join(",");
  const brokers = ports.kafka.map((p) => `127.0.0.1:${p}`);
  const jaas = (module: string, fields: Record<string, string>) =>
    `${module} required ${Object.entries(fields)
      .map(([k, v]) => `${k}="${v}"`)
      .join(" ")};`;
  const scramModule = "org.apache.kafka.common.security.scram.ScramLoginModule";

  function properties(id: number, port: number, controllerPort: number, logDir: string): string {
    return [
      "process.roles=broker,controller",
      `node.id=${id}`,
      `controller.quorum.voters=${voters}`,
      `listeners=SASL_SSL://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
      `advertised.listeners=SASL_SSL://127.0.0.1:${port}`,
      "controller.listener.names=CONTROLLER",
      "listener.security.protocol.map=SASL_SSL:SASL_SSL,CONTROLLER:SSL",
      "inter.broker.listener.name=SASL_SSL",
      "sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512",
      "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
      // The broker's own SCRAM login (inter-broker); SCRAM users live in the metadata (format time, ConfigCommand).
      `listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=${jaas(scramModule, { username: SECURED_USERS.kafkaBroker, password: secrets.kafkaBroker })}`,
      `listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=${scramModule} required;`,
      // PLAIN's users are the JAAS file's: the services' user only.
      `listener.name.sasl_ssl.plain.sasl.jaas.config=${jaas("org.apache.kafka.common.security.plain.PlainLoginModule", {
        username: SECURED_USERS.kafkaBroker,
        password: secrets.kafkaBroker,
        [`user_${SECURED_USERS.kafkaBroker}`]: secrets.kafkaBroker,
        [`user_${SECURED_USERS.kafka}`]: secrets.kafka,
      })}`,
      "ssl.keystore.type=PEM",
      `ssl.keystore.location=${certs.serverKeyStoreFile}`,
      "ssl.truststore.type=PEM",
      `ssl.truststore.location=${certs.caFile}`,
      // Client certificates are verified when sent (mutual TLS), not required: on the client listener (a SASL_SSL
      // listener takes it only prefixed) and between controllers.
      "ssl.client.auth=requested",
      "listener.name.sasl_ssl.ssl.client.auth=requested",
      `log.dirs=${logDir}`,
      "auto.create.topics.enable=false",
      "default.replication.factor=3",
      "min.insync.replicas=2",
      "offsets.topic.replication.factor=3",
      "offsets.topic.num.partitions=8",
      "transaction.state.log.replication.factor=3",
      "transaction.state.log.min.isr=2",
      "num.partitions=1",
      "group.initial.rebalance.delay.ms=0",
      "",
    ].join("\n");
  }

  const nodes: KafkaNode[] = ports.kafka.map((port, i) => {
    const id = i + 1;
    const controllerPort = ports.kafkaControllers[i] as number;
    const dir = join(base, `node-${id}`);
    const logDir = join(dir, "data");
    const pidFile = join(dir, "server.pid");
    const propsFile = join(dir, "server.properties");
    const log4jFile = join(dir, "log4j.properties");
    const logFile = join(profile.dir, "logs", `kafka-${id}.log`);
    return {
      id,
      address: `127.0.0.1:${port}`,
      logFile,
      running: () => readPid(pidFile) !== null,
      async start() {
        if (readPid(pidFile) !== null) return;
        const libs = await resolveJars(pom(paths), paths.cacheDir, "kafka");
        for (const p of [port, controllerPort])
          if (await isPortOpen(p))
            throw new Error(`port ${p} is in use by a process this runner did not start (Kafka node ${id})`);
        mkdirSync(dir, { recursive: true });
        writeFileSync(propsFile, properties(id, port, controllerPort, logDir), { mode: 0o600 });
        writeFileSync(log4jFile, KAFKA_LOG4J);
        if (!existsSync(join(logDir, "meta.properties")))
          await formatKafkaStorage({
            libs,
            log4jFile,
            propsFile,
            clusterId: profile.kafkaClusterId,
            scram: [
              `SCRAM-SHA-512=[name=${SECURED_USERS.kafkaBroker},password=${secrets.kafkaBroker}]`,
              `SCRAM-SHA-512=[name=${SECURED_USERS.kafka},password=${secrets.kafka}]`,
              `SCRAM-SHA-256=[name=${SECURED_USERS.kafka},password=${secrets.kafka}]`,
            ],
          });
        // A third of the default node's heap: three of them share the machine with everything else.
        startDetached({
          cmd: javaBinary(),
          args: kafkaJvmArgs({ libs, log4jFile, propsFile, heap: "320m", light: true }),
          cwd: dir,
          logFile,
          pidFile,
        });
      },
      async stop() {
        const pid = readPid(pidFile);
        if (pid) await stopPid(pid, { graceMs: 60_000 });
        removeFile(pidFile);
      },
      async kill() {
        const pid = readPid(pidFile);
        if (pid) await stopPid(pid, { signal: "SIGKILL" });
        removeFile(pidFile);
      },
    };
  });

  const clientConfig = () => ({
    brokers,
    ssl: { ca: [readFileSync(certs.caFile, "utf8")] },
    sasl: { mechanism: "scram-sha-512" as const, username: SECURED_USERS.kafka, password: secrets.kafka },
  });

  return {
    name: "kafka",
    env: { name: "KAFKA_BROKERS", value: brokers.join(",") },
    companions: securedKafkaVariables(profile),
    logFile: nodes.map((n) => n.logFile).join(", "),
    // Three JVMs starting at once on a small machine, one of them formatting first.
    readyTimeoutMs: 300_000,
    nodes,
    clientConfig,
    async running() {
      return nodes.every((n) => n.running());
    },
    async start() {
      await Promise.all(nodes.map((n) => n.start()));
    },
    /** Every node is a registered broker and the quorum has a leader. */
    ready: () => kafkaClusterReady(clientConfig(), nodes.length),
    async stop() {
      await Promise.all(nodes.map((n) => n.stop()));
    },
  };
}
