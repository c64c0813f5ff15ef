// The relay's default (no OUTBOX_RETENTION_SECONDS): a row Kafka acknowledged is deleted in the same statement
// that would have marked it, and is on the topic; a row a previous release's writer left feed_pending stays,
// marked sent, until the change feed has numbered it. The harness's relay keeps sent rows (the other suites read
// them), so this file starts the API without it and runs a relay of its own.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { LeadReceived, leadReceivedFact, Topics } from "@pss/contracts";
import { partnerFactRow, silentLogger } from "@pss/service-kit";
import { Partitioners } from "kafkajs";
import { createOutboxRelay, type OutboxRelay } from "../src/outbox/outbox-relay.ts";
import { uniqueName } from "../../../test/support/env.ts";
import { until } from "../../../test/support/until.ts";
import { readTopicToEnd } from "./support/events.ts";
import { sample, startApi, type ApiHarness } from "./support/harness.ts";

let api: ApiHarness;
let relay: OutboxRelay;

beforeAll(async () => {
  api = await startApi({ relay: false });
});
afterAll(async () => {
  await relay?.stop();
  await api?.stop();
});

test("the relay deletes what Kafka acknowledged; a previous release's row waiting for its feed number stays, marked sent", async () => {
  // Everything this test publishes is newer than this (the shared topics are read from here, not from the start).
  const since = new Date(Date.now() - 60_000);
  const partner = await api.createPartner();
  const broker = uniqueName("b");
  const { body: brokerBody } = await partner.put(`/partner/v1/brokers/${broker}`, sample.broker());
  const listing = uniqueName("l");
  const { body } = await partner.put(`/partner/v1/listings/${listing}`, sample.listing(broker));
  // The API's two events, each found by its topic and key: a message key alone is not one aggregate's (in a fresh
  // database the broker and the listing are both "1", on different topics).
  const writes = [
    { topic: Topics.brokerEvents.name, key: String(brokerBody.serviceBrokerId) },
    { topic: Topics.listingEvents.name, key: String(body.serviceListingId) },
  ];
  // A fact as a v1.0.0 writer leaves it: feed_pending at its default (true).
  const fact = partnerFactRow(
    LeadReceived,
    { aggregateId: crypto.randomUUID(), version: 1, partnerId: partner.partnerId, mode: "live" },
    leadReceivedFact({ id: "1", external_id: "l" } as never, { id: "1", external_id: "b" } as never, {
      officeId: 1,
      officeLeadCount: 1,
    }),
  );
  const legacyKey = fact.messageKey;
  const [legacy] = await api.sql`
    INSERT INTO outbox (topic, message_key, payload)
    VALUES (${fact.topic}, ${legacyKey}, ${api.sql.json(fact.envelope as never)})
    RETURNING id::text AS id, payload->>'eventId' AS event_id`;
  const written: { topic: string; key: string; id: string; event_id: string }[] = [];
  for (const { topic, key } of writes) {
    const rows = await api.sql<{ id: string; event_id: string }[]>`
      SELECT id::text AS id, payload->>'eventId' AS event_id FROM outbox
      WHERE topic = ${topic} AND message_key = ${key} AND published_at IS NULL`;
    expect(rows).toHaveLength(1);
    written.push({ topic, key, ...rows[0]! });
  }
  const writtenIds = written.map((w) => w.id);

  const producer = api.kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, maxInFlightRequests: 1 });
  relay = createOutboxRelay({ sql: api.sql, producer: () => producer, logger: silentLogger }, { maxBackoffMs: 1000 });
  relay.start();
  await until(
    "the relay to publish the broker, listing and legacy rows",
    async () =>
      (await api.sql`SELECT count(*)::int AS n FROM outbox WHERE id = ANY(${writtenIds}::bigint[])`)[0]!.n === 0 &&
      (await api.sql`SELECT published_at IS NOT NULL AS sent FROM outbox WHERE id = ${legacy!.id}`)[0]?.sent === true,
    30_000,
    50,
  );
  const [kept] = await api.sql`SELECT feed_pending FROM outbox WHERE id = ${legacy!.id}`;
  expect(kept!.feed_pending).toBe(true);

  // Each event on its own topic under its own key (other databases on the same Kafka publish under the same keys;
  // the event ID tells ours apart).
  const expected = [...written, { topic: fact.topic, key: legacyKey, event_id: legacy!.event_id as string }];
  const seen = new Set<string>();
  for (const topic of new Set(expected.map((e) => e.topic)))
    await readTopicToEnd(
      api.kafka,
      topic,
      (m) => {
        const k = m.key?.toString();
        if (expected.some((e) => e.topic === topic && e.key === k))
          seen.add(`${topic} ${k} ${JSON.parse(m.value!.toString()).eventId}`);
      },
      { since },
    );
  for (const e of expected) expect(seen.has(`${e.topic} ${e.key} ${e.event_id}`)).toBe(true);
}, 60_000);
