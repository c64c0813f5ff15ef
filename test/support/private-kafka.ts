// A Kafka broker of a test's own (one KRaft node, the infrastructure runner's jars and settings: infra/src/kafka.ts)
// on free ports of `host`, advertised there: for clients that cannot reach the shared broker, which advertises a
// loopback address (pods of the chart test reach this one at the node's address). A test skips when the jars were
// never fetched (it never downloads them itself).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kafka, logLevel } from "kafkajs";
import { defaultPaths } from "../../infra/src/index.ts";
import {
  formatKafkaStorage,
  KAFKA_LOG4J,
  kafkaJvmArgs,
  kafkaProperties,
  newKafkaClusterId,
} from "../../infra/src/kafka.ts";
import { cachedJars, javaBinary } from "../../infra/src/maven.ts";
import { freePort } from "./ports.ts";

export interface PrivateKafka {
  /** host:port, for KAFKA_BROKERS. */
  brokers: string;
  destroy(): Promise<void>;
}

function jars(): string | null {
  const paths = defaultPaths();
  return cachedJars(join(paths.root, "infra", "maven", "kafka", "pom.xml"), paths.cacheDir, "kafka");
}

/** Why a private broker cannot be had here, or null when it can. */
export function privateKafkaUnavailable(): string | null {
  return jars() ? null : `the Kafka jars are not in ${defaultPaths().cacheDir} (run 'npm run infra -- up kafka' once)`;
}

export async function startPrivateKafka(opts: { host: string }): Promise<PrivateKafka> {
  const libs = jars();
  if (!libs) throw new Error(privateKafkaUnavailable()!);
  const dir = mkdtempSync(join(tmpdir(), "pss-private-kafka-"));
  const logDir = join(dir, "data");
  mkdirSync(logDir);
  const [port, controllerPort] = [await freePort(), await freePort()];
  const props = join(dir, "server.properties");
  const log4j = join(dir, "log4j.properties");
  writeFileSync(props, kafkaProperties({ host: opts.host, port, controllerPort, logDir }));
  writeFileSync(log4j, KAFKA_LOG4J);
  await formatKafkaStorage({ libs, log4jFile: log4j, propsFile: props, clusterId: newKafkaClusterId() });
  const proc = Bun.spawn(
    [javaBinary(), ...kafkaJvmArgs({ libs, log4jFile: log4j, propsFile: props, heap: "384m", light: true })],
    { cwd: dir, stdout: "ignore", stderr: "ignore" },
  );
  const brokers = `${opts.host}:${port}`;
  const destroy = async () => {
    if (proc.exitCode === null) {
      proc.kill("SIGTERM");
      const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(20_000).then(() => false)]);
      if (!exited) proc.kill("SIGKILL");
      await proc.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 90_000;
  for (;;) {
    const admin = new Kafka({
      brokers: [brokers],
      logLevel: logLevel.NOTHING,
      retry: { retries: 0 },
      connectionTimeout: 1000,
    }).admin();
    const ready = await admin
      .connect()
      .then(() => admin.describeCluster())
      .then((c) => c.brokers.length > 0 && c.controller !== null)
      .catch(() => false)
      .finally(() => admin.disconnect().catch(() => {}));
    if (ready) return { brokers, destroy };
    if (proc.exitCode !== null || Date.now() > deadline) {
      await destroy();
      throw new Error(`private Kafka on ${brokers} did not start (${proc.exitCode ?? "90 s"})`);
    }
    await Bun.sleep(300);
  }
}
