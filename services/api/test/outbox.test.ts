// npm test: alone: stops and restarts the local Kafka every other file uses
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Topics } from "@pss/contracts";
import { defaultPaths } from "../../../infra/src/index.ts";
import { kafkaComponent } from "../../../infra/src/kafka.ts";
import { uniqueName } from "../../../test/support/env.ts";
import { eventsOnTopic, waitForOutboxDrained } from "./support/events.ts";
import { sample, startApi, type ApiHarness, type Partner } from "./support/harness.ts";

let api: ApiHarness;
let partner: Partner;
let brokerId: string;

beforeAll(async () => {
  api = await startApi();
  partner = await api.createPartner();
  brokerId = uniqueName("broker");
  await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker());
});
afterAll(() => api.stop());

const kafka = kafkaComponent(defaultPaths());
const kafkaIsOurs = await kafka.running();

const unpublished = async (aggregateId: string) =>
  (await api.sql`SELECT count(*)::int AS n FROM outbox WHERE message_key = ${aggregateId} AND published_at IS NULL`)[0]!
    .n as number;

describe("transactional outbox", () => {
  test("every change is published once, keyed by aggregate, in version order, in the documented envelope", async () => {
    const id = uniqueName("listing");
    const { body } = await partner.put(`/partner/v1/listings/${id}`, sample.listing(brokerId));
    await partner.put(`/partner/v1/listings/${id}`, { status: "UNDER_CONTRACT" });
    await partner.put(`/partner/v1/listings/${id}`, { status: "SOLD" });
    const aggregateId = String(body.serviceListingId);
    await waitForOutboxDrained(api.sql, aggregateId);
    const events = await eventsOnTopic(api.kafka, api.sql, Topics.listingEvents.name, aggregateId);
    expect(events.map((e) => [e.version, e.payload.status])).toEqual([
      [1, "FOR_SALE"],
      [2, "UNDER_CONTRACT"],
      [3, "SOLD"],
    ]);
    const first = events[0]!;
    expect(first).toMatchObject({
      type: "listing.upserted",
      aggregateType: "listing",
      aggregateId,
      partnerId: partner.partnerId,
    });
    expect(first.eventId).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.payload).toMatchObject({
      listingId: body.serviceListingId,
      externalId: id,
      location: sample.listing(brokerId).location,
    });
    expect(new Set(events.map((e) => e.eventId)).size).toBe(3);
  });

  test("broker events carry no e-mail addresses", async () => {
    const b = uniqueName("broker");
    const { body } = await partner.put(`/partner/v1/brokers/${b}`, sample.broker());
    await waitForOutboxDrained(api.sql, body.serviceBrokerId);
    const [event] = await eventsOnTopic(api.kafka, api.sql, Topics.brokerEvents.name, body.serviceBrokerId);
    expect(event!.payload.name).toBe("Jane Broker");
    expect(JSON.stringify(event)).not.toContain("@");
  });

  test("only one relay is active across API instances; the others stand by", async () => {
    // A relay killed by an earlier test may hold the lease until it runs out (OUTBOX_RELAY_LEASE_SECONDS).
    for (let i = 0; i < 150 && !api.relay.isActive(); i++) await Bun.sleep(100);
    expect(api.relay.isActive()).toBe(true);
    const second = await startApi();
    try {
      await Bun.sleep(500);
      // The first API's relay holds the lease (one row, leader_leases); the second's stands by.
      expect(second.relay.isActive()).toBe(false);
      expect(api.relay.isActive()).toBe(true);
      const [lease] =
        await api.sql`SELECT count(*)::int AS n FROM leader_leases WHERE name = 'outbox-relay' AND expires_at > now()`;
      expect(lease!.n).toBe(1);
      const id = uniqueName("listing");
      const { body } = await partner.put(`/partner/v1/listings/${id}`, sample.listing(brokerId));
      await waitForOutboxDrained(api.sql, String(body.serviceListingId));
    } finally {
      await second.stop();
    }
  });

  // Needs control over the broker process, which the local infrastructure runner (what CI uses) gives.
  test.skipIf(!kafkaIsOurs)(
    "while Kafka is down, PUTs keep succeeding; the events are delivered in order once Kafka is back",
    async () => {
      await kafka.stop();
      try {
        const id = uniqueName("listing");
        const created = await partner.put(`/partner/v1/listings/${id}`, sample.listing(brokerId));
        expect(created.status).toBe(201);
        expect((await partner.put(`/partner/v1/listings/${id}`, { title: "Written during the outage" })).status).toBe(
          200,
        );
        expect((await partner.put(`/partner/v1/listings/${id}`, { status: "ARCHIVED" })).status).toBe(200);
        const aggregateId = String(created.body.serviceListingId);
        await Bun.sleep(1000);
        expect(await unpublished(aggregateId)).toBe(3);

        await kafka.start();
        const deadline = Date.now() + 90_000;
        while (!(await kafka.ready().catch(() => false))) {
          if (Date.now() > deadline) throw new Error("kafka did not come back");
          await Bun.sleep(300);
        }
        await waitForOutboxDrained(api.sql, aggregateId, 90_000);
        const events = await eventsOnTopic(api.kafka, api.sql, Topics.listingEvents.name, aggregateId);
        expect(events.map((e) => [e.version, e.payload.status, e.payload.title])).toEqual([
          [1, "FOR_SALE", sample.listing(brokerId).title],
          [2, "FOR_SALE", "Written during the outage"],
          [3, "ARCHIVED", "Written during the outage"],
        ]);
      } finally {
        if (!(await kafka.running())) await kafka.start();
        while (!(await kafka.ready().catch(() => false))) await Bun.sleep(300);
      }
    },
    180_000,
  );
});
