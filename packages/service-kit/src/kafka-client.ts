// The one place that knows how the Kafka client library (kafkajs 2.2.4) is made and configured: connection
// security (TLS, SASL), retries, logging, and the producer every event goes through. Everything else takes the
// types re-exported here, so replacing the library means replacing this file and the consumer loop
// (event-consumer.ts) that drives its consumer API. What kafkajs did in our broker-fault runs and what we do
// about it: docs/operations.md, "Kafka client behaviour under broker faults".
import {
  Kafka,
  logLevel as kafkaLogLevel,
  Partitioners,
  type KafkaConfig as KafkajsConfig,
  type logCreator,
  type SASLOptions,
} from "kafkajs";
import type { KafkaConfig } from "./config.ts";
import type { Logger } from "./logger.ts";
import { tlsConnectOptions } from "./tls-files.ts";

export type { Admin, Consumer, IHeaders, Kafka, KafkaMessage, Producer } from "kafkajs";

/** Connection settings for kafkajs from our configuration: brokers, TLS (files re-read when rotated), SASL. */
export function kafkaConnection(
  config: Pick<KafkaConfig, "brokers" | "security">,
): Pick<KafkajsConfig, "brokers" | "ssl" | "sasl"> {
  const { tls, sasl } = config.security ?? { tls: null, sasl: null };
  return {
    brokers: config.brokers,
    ...(tls ? { ssl: tlsConnectOptions(tls) } : {}),
    // The mechanism names are kafkajs's own; its union type does not narrow from ours.
    ...(sasl ? { sasl: { ...sasl } as SASLOptions } : {}),
  };
}

/** kafkajs log lines we know and handle ourselves: logged at debug, not as warnings or errors. */
const EXPECTED_LINES = [
  // Concurrent start-ups race to create topics; ensureTopics() verifies the outcome itself.
  (_message: string, fields: Record<string, unknown>) => fields.error === "Topic creation errors",
  // Our idempotent producer bounds its retries on purpose (createEventProducer).
  (message: string) => message.includes("Limiting retries for the idempotent producer"),
];

/** The last connection error each client logged: what a readiness probe that ran out of time reports. */
type SeenErrors = { last?: { message: string; at: number } };
const lastConnectionErrors = new WeakMap<Kafka, SeenErrors>();

/**
 * The connection error this client logged last, if within `withinMs`: kafkajs keeps retrying a connection a TLS
 * handshake refused, so a probe runs out of time before it sees why; the log line it wrote has the reason.
 */
export function recentConnectionError(kafka: Kafka, withinMs = 30_000): Error | null {
  const last = lastConnectionErrors.get(kafka)?.last;
  return last && Date.now() - last.at < withinMs ? new Error(last.message) : null;
}

function kafkaLogger(logger: Logger, seen: SeenErrors): logCreator {
  return () =>
    ({ level, log }) => {
      const { message, ...rest } = log;
      const fields = { component: "kafkajs", ...rest } as Record<string, unknown>;
      delete fields.timestamp;
      delete fields.logger;
      if (message.startsWith("Connection error:") || /authentication failed/i.test(message))
        seen.last = { message, at: Date.now() };
      if (EXPECTED_LINES.some((expected) => expected(message, fields))) logger.debug(message, fields);
      else if (level <= kafkaLogLevel.ERROR) logger.error(message, fields);
      else if (level === kafkaLogLevel.WARN) logger.warn(message, fields);
      else logger.debug(message, fields);
    };
}

export function createKafka(config: KafkaConfig, logger: Logger): Kafka {
  const seen: SeenErrors = {};
  const kafka = new Kafka({
    clientId: config.clientId,
    ...kafkaConnection(config),
    logLevel: kafkaLogLevel.WARN,
    logCreator: kafkaLogger(logger, seen),
    // A TLS handshake and a SASL exchange take longer than a bare connect, the more so on a loaded host.
    connectionTimeout: config.security?.tls || config.security?.sasl ? 5000 : 1000,
    // Each wait at most 5 s: with the default 30 s cap, a service that waited through an outage (boot, relay)
    // could take half a minute to notice the broker was back.
    retry: { initialRetryTime: 200, retries: 8, maxRetryTime: 5000 },
  });
  lastConnectionErrors.set(kafka, seen);
  return kafka;
}

/**
 * The producer every event is sent with (the outbox relay, dead letters, replays): idempotent (the broker drops a
 * retried batch it already has, so a retry after a lost answer adds no copy), every send acknowledged by all
 * in-sync replicas (kafkajs requires acks=-1 with idempotence; min.insync.replicas sets how many that is), one
 * request in flight (what per-key order needs), keys to partitions with Java's partitioner. Retries are bounded,
 * not kafkajs's unlimited idempotent default: a send that gives up is retried by its caller (the relay keeps the
 * rows in the outbox and sends them again with a fresh producer, a new producer id), so an outage never blocks a
 * shutdown, and a copy that a resend may add is one the consumers' version checks drop.
 */
export function createEventProducer(kafka: Kafka, opts: { retries?: number } = {}) {
  return kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    createPartitioner: Partitioners.DefaultPartitioner,
    retry: { retries: opts.retries ?? 5 },
  });
}
