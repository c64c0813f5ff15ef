import { describe, expect, test } from "bun:test";
import {
  BrokerUpserted,
  brokerUpsertedPayload,
  buildEnvelope,
  ListingUpserted,
  listingUpsertedPayload,
  type AnyEventEnvelope,
} from "@pss/contracts";
import { brokerEventProblem, listingEventProblem } from "./event-payloads.ts";

const listingPayload = {
  listingId: 12,
  brokerId: "5",
  status: "FOR_SALE",
  businessType: "Bakery",
  title: "Corner bakery",
  description: null,
  establishedAt: null,
  location: { city: "Austin", state: "TX", country: "US", visibility: "SHOW_CITY_STATE" },
  financials: { askingPrice: 1 },
  updatedAt: "2026-05-01T12:00:00.000Z",
};
const event = (aggregateType: "listing" | "broker", aggregateId: string, payload: unknown): AnyEventEnvelope => ({
  eventId: crypto.randomUUID(),
  type: `${aggregateType}.upserted`,
  aggregateType,
  aggregateId,
  version: 1,
  partnerId: "p",
  occurredAt: "2026-05-01T12:00:00.000Z",
  payload,
});

describe("the indexer checks only the payload fields it uses", () => {
  test("fields added by a newer API version, at any depth, are no problem", () => {
    const newer = {
      ...listingPayload,
      energyRating: "A",
      location: { ...listingPayload.location, geo: { lat: 30.2, lon: -97.7 } },
      financials: { askingPrice: 1, ebitda: 5 },
    };
    expect(listingEventProblem(event("listing", "12", newer))).toBeNull();
    expect(brokerEventProblem(event("broker", "5", { brokerId: "5", pronouns: "she/her" }))).toBeNull();
  });

  test("a used field missing or of the wrong type is still a problem", () => {
    const { businessType: _, ...withoutType } = listingPayload;
    expect(listingEventProblem(event("listing", "12", withoutType))).toContain("businessType");
    expect(
      listingEventProblem(
        event("listing", "12", { ...listingPayload, location: { ...listingPayload.location, city: 5 } }),
      ),
    ).toContain("/location/city");
  });
});

describe("what the API writes is what the indexer reads", () => {
  test("listing.upserted and broker.upserted from the catalog's builders, through JSON", () => {
    const at = new Date("2026-05-01T12:00:00.123Z");
    const listing = listingUpsertedPayload({
      listingId: 12,
      externalId: "L-1",
      brokerId: "5",
      document: {
        status: "FOR_SALE",
        businessType: "Bakery",
        location: { city: "Austin", state: "TX", country: "US", visibility: "SHOW_CITY_STATE" },
        financing: { sellerFinancing: true },
      },
      createdAt: at,
      updatedAt: at,
    });
    const broker = brokerUpsertedPayload({ brokerId: "5", externalId: "B-1", officeId: 1, document: { name: "Ann" } });
    const received = (e: typeof ListingUpserted | typeof BrokerUpserted, id: string, p: unknown) =>
      JSON.parse(
        JSON.stringify(buildEnvelope(e, { aggregateId: id, version: 1, partnerId: "p", mode: "live" }, p as never)),
      ) as AnyEventEnvelope;
    expect(listingEventProblem(received(ListingUpserted, "12", listing))).toBeNull();
    expect(listingEventProblem(received(ListingUpserted, "13", listing))).toBe(
      "payload listingId differs from aggregateId",
    );
    expect(brokerEventProblem(received(BrokerUpserted, "5", broker))).toBeNull();
  });
});
