// Composition root for a relay-only process: the outbox relay without the HTTP API. Run API instances with
// OUTBOX_RELAY_ENABLED=false and one or more of these (one is active at a time; the others stand by), so
// relaying never competes with requests for the API's event loop.
import { Partitioners } from "kafkajs";
import { topicSpecs } from "@pss/contracts";
import { createFeedSequencer,
  loadConfigOrExit,
  createKafka,
  createLogger,
  createMetrics,
  createPostgres,
  createShutdown,
  ensureTopics,
  installCrashGuard,
  pingKafka,
  retryUntilDone,
  startHealthServer,
} from "@pss/service-kit";
import { loadRelayConfig } from "./config.ts";
import { createRelayMetrics } from "./outbox/outbox-metrics.ts";
import { createOutboxRelay } from "./outbox/outbox-relay.ts";

const config = loadConfigOrExit("outbox-relay", loadRelayConfig);

const logger = createLogger({ service: "outbox-relay", level: config.logLevel });
installCrashGuard(logger);
// The relay's own counters and process metrics; the outbox backlog gauges are the API's (outbox-metrics.ts).
const metrics = createMetrics({ service: "outbox-relay" });
const sql = createPostgres(config.postgres, { applicationName: "pss-outbox-relay" });
const kafka = createKafka(config.kafka, logger);
const producer = kafka.producer({ maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner, retry: { retries: 5 } });
const relay = createOutboxRelay({ sql, producer, logger, metrics: createRelayMetrics(metrics) }, config.outboxRelay);
// The change feed's numbering runs beside the relay (main.ts leaves it to this process when its relay is off).
const feedSequencer = createFeedSequencer({ sql, logger }, { retentionDays: config.feedRetentionDays });
feedSequencer.start();

let stopping = false;
// Boots during a Kafka outage: topics are created (retrying) before the relay starts; until then it is not ready.
let relayStarted = false;
const relayBoot = retryUntilDone("create topics", () => ensureTopics(kafka, topicSpecs(config.kafka.topics), logger), { logger, isStopping: () => stopping }).then(() => {
  if (stopping) return;
  relay.start();
  relayStarted = true;
});
const health = startHealthServer({
  service: "outbox-relay",
  port: config.healthPort,
  checks: {
    postgres: () => sql`SELECT 1`,
    // An admin connection per probe is not free: at most one every 10 s.
    kafka: { run: () => pingKafka(kafka), everyMs: 10_000, timeoutMs: 2000 },
    relay: async () => {
      if (!relayStarted) throw new Error("topics not created yet");
    },
  },
  onCheckFailure: (name, err) => logger.debug("readiness check failing", { check: name, err: (err as Error).message }),
  isStopping: () => stopping,
  metrics,
});

const shutdown = createShutdown(logger);
shutdown.register("mark not ready", () => {
  stopping = true;
});
shutdown.register("stop outbox relay", async () => {
  await relayBoot;
  await relay.stop();
});
shutdown.register("stop feed sequencer", () => feedSequencer.stop());
shutdown.register("stop health endpoint", () => health.stop());
shutdown.register("close postgres", () => sql.end({ timeout: 5 }));
shutdown.listen();
