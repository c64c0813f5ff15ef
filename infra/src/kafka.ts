import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Kafka, logLevel, type KafkaConfig } from "kafkajs";
import type { Component, InfraPaths } from "./component.ts";
import { javaBinary, resolveJars } from "./maven.ts";
import { isPortOpen, readPid, removeFile, runCommand, startDetached, stopPid } from "./process.ts";

export const KAFKA_PORT = 59092;
const CONTROLLER_PORT = 59093;

/** A one-node KRaft broker's server.properties: listening and advertised on `host` (the address clients use). */
export function kafkaProperties(o: { host: string; port: number; controllerPort: number; logDir: string }): string {
  return [
    "process.roles=broker,controller",
    "node.id=1",
    `controller.quorum.voters=1@${o.host}:${o.controllerPort}`,
    `listeners=PLAINTEXT://${o.host}:${o.port},CONTROLLER://${o.host}:${o.controllerPort}`,
    `advertised.listeners=PLAINTEXT://${o.host}:${o.port}`,
    "controller.listener.names=CONTROLLER",
    "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    `log.dirs=${o.logDir}`,
    // Services create their topics with explicit partition counts.
    "auto.create.topics.enable=false",
    "offsets.topic.replication.factor=1",
    "offsets.topic.num.partitions=8",
    "transaction.state.log.replication.factor=1",
    "transaction.state.log.min.isr=1",
    "num.partitions=1",
    "group.initial.rebalance.delay.ms=0",
    "",
  ].join("\n");
}

export const KAFKA_LOG4J = [
  "log4j.rootLogger=INFO, stdout",
  "log4j.appender.stdout=org.apache.log4j.ConsoleAppender",
  "log4j.appender.stdout.layout=org.apache.log4j.PatternLayout",
  "log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n",
  "log4j.logger.kafka=WARN",
  "log4j.logger.org.apache.kafka=WARN",
  "log4j.logger.state.change.logger=WARN",
  "",
].join("\n");

/**
 * A KRaft cluster id, as `kafka-storage random-uuid` prints one: 16 random bytes in base64url, never starting with
 * '-' (the tool's command line would read it as an option). No JVM start for it.
 */
export function newKafkaClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString("base64url");
    if (!id.startsWith("-")) return id;
  }
}

/**
 * Formats a KRaft node's storage (`kafka-storage format`) with the cluster's id; `scram` adds SCRAM credentials
 * to the initial metadata (`--add-scram 'SCRAM-SHA-512=[name=…,password=…]'`), so they exist before any broker runs.
 */
export async function formatKafkaStorage(opts: {
  libs: string;
  log4jFile: string;
  propsFile: string;
  clusterId: string;
  scram?: string[];
}): Promise<void> {
  await runCommand([
    javaBinary(),
    `-Dlog4j.configuration=file:${opts.log4jFile}`,
    "-cp",
    `${opts.libs}/*`,
    "kafka.tools.StorageTool",
    "format",
    "-t",
    opts.clusterId,
    "-c",
    opts.propsFile,
    ...(opts.scram ?? []).flatMap((s) => ["--add-scram", s]),
  ]);
}

/**
 * The JVM arguments of a Kafka node. `light`: the client compiler only and the serial collector, for the secured
 * profile's three nodes on a small machine: they start in half the time and use less CPU, at a throughput a
 * correctness run does not need.
 */
export function kafkaJvmArgs(opts: {
  libs: string;
  log4jFile: string;
  propsFile: string;
  heap: string;
  light?: boolean;
}): string[] {
  return [
    `-Xms${opts.heap}`,
    `-Xmx${opts.heap}`,
    ...(opts.light ? ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"] : ["-XX:+UseG1GC"]),
    "-Djava.awt.headless=true",
    `-Dlog4j.configuration=file:${opts.log4jFile}`,
    "-cp",
    `${opts.libs}/*`,
    "kafka.Kafka",
    opts.propsFile,
  ];
}

/** The cluster answers metadata with at least `brokers` registered brokers and a controller (one attempt). */
export async function kafkaClusterReady(
  connection: Pick<KafkaConfig, "brokers" | "ssl" | "sasl">,
  brokers: number,
): Promise<boolean> {
  const admin = new Kafka({
    ...connection,
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
    connectionTimeout: connection.ssl ? 3000 : 1000,
  }).admin();
  try {
    await admin.connect();
    const cluster = await admin.describeCluster();
    return cluster.brokers.length >= brokers && cluster.controller !== null;
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

export function kafkaComponent(paths: InfraPaths): Component {
  const dir = join(paths.dataDir, "kafka");
  const logDir = join(dir, "data");
  const logFile = join(paths.dataDir, "logs", "kafka.log");
  const pidFile = join(dir, "server.pid");
  const propsFile = join(dir, "server.properties");
  const log4jFile = join(dir, "log4j.properties");
  const pom = join(paths.root, "infra", "maven", "kafka", "pom.xml");

  return {
    name: "kafka",
    env: { name: "KAFKA_BROKERS", value: `127.0.0.1:${KAFKA_PORT}` },
    logFile,
    readyTimeoutMs: 90_000,
    async running() {
      return readPid(pidFile) !== null;
    },
    async start() {
      const libs = await resolveJars(pom, paths.cacheDir, "kafka");
      if (await isPortOpen(KAFKA_PORT)) {
        throw new Error(
          `port ${KAFKA_PORT} is in use by a process this runner did not start; stop it or set KAFKA_BROKERS`,
        );
      }
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        propsFile,
        kafkaProperties({ host: "127.0.0.1", port: KAFKA_PORT, controllerPort: CONTROLLER_PORT, logDir }),
      );
      writeFileSync(log4jFile, KAFKA_LOG4J);
      // KRaft storage is formatted once per data directory.
      if (!existsSync(join(logDir, "meta.properties")))
        await formatKafkaStorage({ libs, log4jFile, propsFile, clusterId: newKafkaClusterId() });
      startDetached({
        cmd: javaBinary(),
        args: kafkaJvmArgs({ libs, log4jFile, propsFile, heap: "512m" }),
        cwd: dir,
        logFile,
        pidFile,
      });
    },
    ready: () => kafkaClusterReady({ brokers: [`127.0.0.1:${KAFKA_PORT}`] }, 1),
    async stop() {
      const pid = readPid(pidFile);
      if (pid) await stopPid(pid, { graceMs: 30_000 });
      removeFile(pidFile);
    },
  };
}
