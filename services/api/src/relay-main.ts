// Composition root for a relay-only process: the outbox relay without the HTTP API. Run API instances with
// OUTBOX_RELAY_ENABLED=false and one or more of these (one is active at a time; the others stand by), so
// relaying never competes with requests for the API's event loop.
import { topicSpecs } from "@pss/contracts";
import {
  createEventProducer,
  createFeedSequencer,
  createKafka,
  createPostgres,
  numberFeedPass,
  runService,
} from "@pss/service-kit";
import type { ServiceKit, ServiceParts } from "@pss/service-kit";
import { loadRelayConfig } from "./config.ts";
import { createRelayMetrics } from "./outbox/outbox-metrics.ts";
import { createOutboxRelay } from "./outbox/outbox-relay.ts";

await runService({ name: "outbox-relay", loadConfig: loadRelayConfig, build });

// The relay's own counters and process metrics; the outbox backlog gauges are the API's (outbox-metrics.ts).
function build({
  config,
  logger,
  metrics,
  booted,
  tracing,
}: ServiceKit<ReturnType<typeof loadRelayConfig>>): ServiceParts {
  const sql = createPostgres(config.postgres, { applicationName: "pss-outbox-relay" });
  const kafka = createKafka(config.kafka, logger);
  const relay = createOutboxRelay(
    // Each round's delete and a pass of the feed's numbering commit together (outbox-relay.ts, markSentRows).
    {
      sql,
      producer: () => createEventProducer(kafka),
      logger,
      metrics: createRelayMetrics(metrics),
      tracing,
      feedPass: (tx) => numberFeedPass(tx),
    },
    config.outboxRelay,
  );
  // The change feed's numbering runs beside the relay (main.ts leaves it to this process when its relay is off).
  const feedSequencer = createFeedSequencer({ sql, logger }, { retentionDays: config.feedRetentionDays });
  feedSequencer.start();
  return {
    clients: { sql, kafka },
    // Boots during a Kafka outage: topics are created (retrying) before the relay starts; until then it is not ready.
    topics: topicSpecs(config.kafka.topics),
    start: { what: "start relaying", run: () => relay.start(), check: "relay" },
    stop: {
      "stop outbox relay": async () => {
        await booted;
        await relay.stop();
      },
      "stop feed sequencer": () => feedSequencer.stop(),
    },
  };
}
