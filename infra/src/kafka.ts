import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Kafka, logLevel } from "kafkajs";
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

/** KRaft storage formatted for a new data directory (once per directory). */
export async function formatKafkaStorage(java: string, classpath: string, log4jFile: string, propsFile: string) {
  const clusterId = (await runCommand([java, "-cp", classpath, "kafka.tools.StorageTool", "random-uuid"]))
    .trim()
    .split("\n")
    .pop()!;
  await runCommand([
    java,
    `-Dlog4j.configuration=file:${log4jFile}`,
    "-cp",
    classpath,
    "kafka.tools.StorageTool",
    "format",
    "-t",
    clusterId,
    "-c",
    propsFile,
  ]);
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
      const classpath = `${libs}/*`;
      const java = javaBinary();
      // KRaft storage is formatted once per data directory.
      if (!existsSync(join(logDir, "meta.properties"))) await formatKafkaStorage(java, classpath, log4jFile, propsFile);
      startDetached({
        cmd: java,
        args: [
          "-Xms512m",
          "-Xmx512m",
          "-XX:+UseG1GC",
          "-Djava.awt.headless=true",
          `-Dlog4j.configuration=file:${log4jFile}`,
          "-cp",
          classpath,
          "kafka.Kafka",
          propsFile,
        ],
        cwd: dir,
        logFile,
        pidFile,
      });
    },
    async ready() {
      const kafka = new Kafka({
        brokers: [`127.0.0.1:${KAFKA_PORT}`],
        logLevel: logLevel.NOTHING,
        retry: { retries: 0 },
        connectionTimeout: 1000,
      });
      const admin = kafka.admin();
      try {
        await admin.connect();
        const cluster = await admin.describeCluster();
        return cluster.brokers.length > 0 && cluster.controller !== null;
      } finally {
        await admin.disconnect().catch(() => {});
      }
    },
    async stop() {
      const pid = readPid(pidFile);
      if (pid) await stopPid(pid, { graceMs: 30_000 });
      removeFile(pidFile);
    },
  };
}
