// Every producer's output (the pure builders the services call) read by every reader of that event type, the
// producer forms strict, the reader forms tolerant (docs/events.md).
import { describe, expect, test } from "bun:test";
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { registerFormats } from "../formats.ts";
import { ALL_TOPICS } from "../topics.ts";
import { WEBHOOK_EVENT_TYPES } from "../webhooks.ts";
import {
  brokerAvatarProcessedFact,
  BrokerAvatarProcessed,
  BrokerUpserted,
  BrokerUpsertedFeedReader,
  BrokerUpsertedIdReader,
  brokerUpsertedPayload,
  buildEnvelope,
  decodePayload,
  EVENT_CATALOG,
  eventDefinition,
  LeadReceived,
  leadReceivedFact,
  LeadSubmitted,
  LeadSubmittedPayload,
  leadSubmittedPayload,
  ListingMediaProcessed,
  listingMediaProcessedFact,
  ListingPublished,
  ListingReportChanged,
  listingReportChangedFact,
  ListingUnpublished,
  ListingUpserted,
  ListingUpsertedFeedReader,
  ListingUpsertedIndexerReader,
  ListingUpsertedMediaReader,
  listingUpsertedPayload,
  listingVisibilityFact,
  partnerFactKey,
  type EventDefinition,
} from "./index.ts";
import { AnyEventEnvelope } from "../envelope.ts";

registerFormats();

const at = new Date("2026-05-01T12:00:00.123Z");
const listingDocument = {
  status: "FOR_SALE" as const,
  businessType: "Bakery",
  title: "Corner bakery",
  location: {
    streetAddress1: "1 Main St",
    city: "Austin",
    state: "TX",
    country: "US",
    visibility: "SHOW_FULL_ADDRESS" as const,
  },
  financials: { askingPrice: 250_000 },
  property: { propertyKind: "LEASED", rentData: { monthlyRent: 4_000 } },
  photos: [{ url: "https://img.example/1.jpg", sortKey: 1 }],
};
const minimalListing = {
  status: "DRAFT" as const,
  businessType: "Cafe",
  location: { city: "Austin", state: "TX", country: "US", visibility: "SHOW_CITY_STATE" as const },
};
const image = {
  url: "https://img.example/1.jpg",
  state: "ready" as const,
  failure_reason: null,
  warning: "small",
  width: 800,
  height: 600,
};

/** Each event type: what its producers build (every builder, in the shapes they are called with) and who reads it. */
const cases: { event: EventDefinition; outputs: unknown[]; readers: [string, TSchema][] }[] = [
  {
    event: ListingUpserted,
    outputs: [
      listingUpsertedPayload({
        listingId: 12,
        externalId: "L-1",
        brokerId: "5",
        document: listingDocument,
        createdAt: at,
        updatedAt: at,
      }),
      listingUpsertedPayload({
        listingId: 13,
        externalId: "L-2",
        brokerId: "5",
        document: minimalListing,
        createdAt: at,
        updatedAt: new Date(),
      }),
    ],
    readers: [
      ["catalog", ListingUpserted.reader],
      ["indexer", ListingUpsertedIndexerReader],
      ["change feed", ListingUpsertedFeedReader],
      ["media", ListingUpsertedMediaReader],
    ],
  },
  {
    event: BrokerUpserted,
    outputs: [
      brokerUpsertedPayload({
        brokerId: "5",
        externalId: "B-1",
        officeId: 3,
        document: {
          name: "Ann",
          phone: "+15125550100",
          profile: { bio: "x" },
          licenses: [{ licenseNumber: "1", state: "TX" }],
        },
      }),
      brokerUpsertedPayload({ brokerId: "6", externalId: "B-2", officeId: 3, document: { name: "Bo" } }),
    ],
    readers: [
      ["catalog", BrokerUpserted.reader],
      ["indexer and media", BrokerUpsertedIdReader],
      ["change feed", BrokerUpsertedFeedReader],
    ],
  },
  {
    event: LeadSubmitted,
    outputs: [
      leadSubmittedPayload({
        leadId: crypto.randomUUID(),
        listingId: "12",
        brokerId: "5",
        officeId: 3,
        organizationId: 1,
        createdAt: at,
      }),
    ],
    readers: [["leads", LeadSubmittedPayload]],
  },
  ...[ListingPublished, ListingUnpublished].map((event) => ({
    event,
    outputs: [
      listingVisibilityFact(
        { id: "12", external_id: "L-1", status: "FOR_SALE", version: 4 },
        { id: "5", external_id: "B-1" },
      ),
    ],
    readers: [["webhooks", event.reader]] as [string, TSchema][],
  })),
  {
    event: ListingMediaProcessed,
    outputs: [
      listingMediaProcessedFact({ id: "12", external_id: "L-1", version: 2 }, [
        { ...image, sort_key: 1 },
        { ...image, state: "failed", failure_reason: "404", warning: null, width: null, height: null, sort_key: 2 },
      ]),
      listingMediaProcessedFact({ id: "12", external_id: "L-1", version: 3 }, []),
    ],
    readers: [["webhooks", ListingMediaProcessed.reader]],
  },
  {
    event: BrokerAvatarProcessed,
    outputs: [brokerAvatarProcessedFact({ id: "5", external_id: "B-1", version: 2 }, image)],
    readers: [["webhooks", BrokerAvatarProcessed.reader]],
  },
  {
    event: LeadReceived,
    outputs: [
      leadReceivedFact(
        { id: "12", external_id: "L-1" },
        { id: "5", external_id: "B-1" },
        { officeId: 3, officeLeadCount: 7 },
      ),
    ],
    readers: [["webhooks", LeadReceived.reader]],
  },
  {
    event: ListingReportChanged,
    outputs: [
      listingReportChangedFact(
        {
          externalListingId: "L-1",
          serviceListingId: 12,
          state: "LIVE_WITH_WARNINGS",
          previousState: "PROCESSING",
          reasons: [{ code: "HAS_WARNINGS", message: "Buyers see it; 1 warning says what they miss" }],
          listingVersion: 4,
        },
        2,
      ),
    ],
    readers: [["webhooks", ListingReportChanged.reader]],
  },
];

describe("the event catalog", () => {
  test("every event type our services write is in it, once, with a version and a topic", () => {
    const types = EVENT_CATALOG.map((e) => e.type);
    expect(new Set(types).size).toBe(types.length);
    expect(types).toEqual(
      expect.arrayContaining(["listing.upserted", "broker.upserted", "lead.submitted", ...WEBHOOK_EVENT_TYPES]),
    );
    expect(cases.map((c) => c.event.type).sort()).toEqual([...types].sort());
    for (const e of EVENT_CATALOG) {
      expect(e.version).toBeGreaterThanOrEqual(1);
      expect(ALL_TOPICS).toContain(e.topic);
      expect(eventDefinition(e.type)).toBe(e);
    }
    expect(eventDefinition("listing.renamed")).toBeUndefined();
  });

  for (const { event, outputs, readers } of cases) {
    test(`${event.type}: what the producers build fits the producer form and every reader`, () => {
      for (const payload of outputs) {
        expect([...Value.Errors(event.payload, payload)].map((e) => `${e.path} ${e.message}`)).toEqual([]);
        // Through the envelope and JSON, as a consumer receives it.
        const received = JSON.parse(
          JSON.stringify(
            buildEnvelope(
              event,
              { aggregateId: "1", version: 1, partnerId: crypto.randomUUID(), mode: "live" },
              payload as never,
            ),
          ),
        );
        expect(Value.Check(AnyEventEnvelope, received)).toBe(true);
        expect(received.type).toBe(event.type);
        for (const [who, reader] of readers) {
          const decoded = decodePayload(reader, received.payload, event.type);
          expect({ who, ...decoded }).toEqual({ who, ok: true, value: received.payload });
        }
      }
    });

    test(`${event.type}: producers are strict, readers tolerate fields added later at any depth`, () => {
      const payload = JSON.parse(JSON.stringify(outputs[0])) as Record<string, unknown>;
      const added = { ...payload, addedLater: { nested: true } };
      expect(Value.Check(event.payload, added)).toBe(false);
      for (const [, reader] of readers) expect(decodePayload(reader, added, event.type).ok).toBe(true);
      // A nested object the producer closes stays open to readers too.
      const nestedKey = Object.keys(payload).find(
        (k) =>
          payload[k] &&
          typeof payload[k] === "object" &&
          !Array.isArray(payload[k]) &&
          (event.payload.properties[k] as { additionalProperties?: unknown }).additionalProperties === false,
      );
      if (nestedKey) {
        const deeper = { ...payload, [nestedKey]: { ...(payload[nestedKey] as object), addedLater: 1 } };
        expect(Value.Check(event.payload, deeper)).toBe(false);
        expect(decodePayload(event.reader, deeper, event.type).ok).toBe(true);
      }
    });
  }

  test("a reader still refuses a field it uses when it is missing or of the wrong type", () => {
    const payload = listingUpsertedPayload({
      listingId: 12,
      externalId: "L-1",
      brokerId: "5",
      document: listingDocument,
      createdAt: at,
      updatedAt: at,
    });
    const { businessType: _, ...withoutType } = payload;
    expect(decodePayload(ListingUpsertedIndexerReader, withoutType, "listing.upserted")).toMatchObject({
      ok: false,
      reason: expect.stringContaining("businessType"),
    });
    expect(
      decodePayload(
        ListingUpsertedIndexerReader,
        { ...payload, location: { ...payload.location, city: 5 } },
        "listing.upserted",
      ),
    ).toMatchObject({ ok: false, reason: expect.stringContaining("/location/city") });
    // Fields another consumer uses are not the indexer's concern; financing is optional to every reader (older events).
    const { externalId: _e, photos: _p, financing: _f, ...older } = payload;
    expect(decodePayload(ListingUpsertedIndexerReader, older, "listing.upserted").ok).toBe(true);
    expect(decodePayload(ListingUpserted.reader, { ...payload, financing: undefined }, "listing.upserted").ok).toBe(
      true,
    );
    expect(decodePayload(LeadSubmitted.reader, "not an object", "lead.submitted")).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^invalid lead\.submitted payload: /),
    });
  });

  test("facts are keyed by aggregate type and ID", () => {
    expect(partnerFactKey("lead.received", "abc")).toBe("lead:abc");
    expect(partnerFactKey("broker.avatar.processed", "5")).toBe("broker:5");
    expect(partnerFactKey("listing.report.changed", "12")).toBe("listing:12");
  });
});
