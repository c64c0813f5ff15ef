// The change feed reads record events with the catalog's readers: what the API writes (the catalog's builders)
// makes the feed events partners see; a row it cannot read makes none.
import { expect, test } from "bun:test";
import {
  BrokerUpserted,
  brokerUpsertedPayload,
  buildEnvelope,
  LeadReceived,
  leadReceivedFact,
  ListingUpserted,
  listingUpsertedPayload,
} from "@pss/contracts";
import { feedEventsOf } from "./feed-events.ts";

const partnerId = crypto.randomUUID();
const at = new Date("2026-05-01T12:00:00.123Z");
const listing = listingUpsertedPayload({
  listingId: 12,
  externalId: "L-1",
  brokerId: "5",
  document: {
    status: "UNDER_CONTRACT",
    businessType: "Bakery",
    location: { city: "Austin", state: "TX", country: "US", visibility: "SHOW_CITY_STATE" },
  },
  createdAt: at,
  updatedAt: at,
});
const stored = (envelope: unknown) => JSON.parse(JSON.stringify(envelope));

test("listing.upserted: updated with its changed paths, and its status change", () => {
  const envelope = stored(
    buildEnvelope(ListingUpserted, { aggregateId: "12", version: 2, partnerId, mode: "test" }, listing),
  );
  const events = feedEventsOf({
    payload: envelope,
    changes: [{ path: "status" }],
    statusFrom: "FOR_SALE",
    statusTo: "UNDER_CONTRACT",
  });
  const ids = { externalListingId: "L-1", serviceListingId: 12, serviceBrokerId: "5" };
  expect(events).toEqual([
    {
      partnerId,
      mode: "test",
      eventId: envelope.eventId,
      occurredAt: envelope.occurredAt,
      version: 2,
      type: "listing.updated",
      recordType: "listing",
      data: { ...ids, status: "UNDER_CONTRACT", changedPaths: ["status"] },
    },
    {
      partnerId,
      mode: "test",
      eventId: envelope.eventId,
      occurredAt: envelope.occurredAt,
      version: 2,
      type: "listing.status_changed",
      recordType: "listing",
      data: { ...ids, from: "FOR_SALE", to: "UNDER_CONTRACT" },
    },
  ]);
  // A row whose payload the feed cannot read (no status) makes no feed event.
  const { status: _, ...withoutStatus } = listing;
  expect(
    feedEventsOf({ payload: { ...envelope, payload: withoutStatus }, changes: null, statusFrom: null, statusTo: null }),
  ).toEqual([]);
});

test("broker.upserted and a fact", () => {
  const broker = stored(
    buildEnvelope(
      BrokerUpserted,
      { aggregateId: "5", version: 1, partnerId, mode: "live" },
      brokerUpsertedPayload({ brokerId: "5", externalId: "B-1", officeId: 1, document: { name: "Ann" } }),
    ),
  );
  expect(
    feedEventsOf({ payload: broker, changes: [{ path: "name" }], statusFrom: null, statusTo: null }).map((e) => [
      e.type,
      e.data,
    ]),
  ).toEqual([["broker.created", { externalBrokerId: "B-1", serviceBrokerId: "5", changedPaths: ["name"] }]]);
  const data = leadReceivedFact(
    { id: "12", external_id: "L-1" },
    { id: "5", external_id: "B-1" },
    { officeId: 3, officeLeadCount: 9 },
  );
  const fact = stored(
    buildEnvelope(LeadReceived, { aggregateId: crypto.randomUUID(), version: 1, partnerId, mode: "live" }, data),
  );
  expect(
    feedEventsOf({ payload: fact, changes: null, statusFrom: null, statusTo: null }).map((e) => [
      e.type,
      e.recordType,
      e.data,
    ]),
  ).toEqual([["lead.received", "listing", data]]);
});
