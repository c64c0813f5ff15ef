import { describe, expect, test } from "bun:test";
import type { AnyEventEnvelope } from "@pss/contracts";
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
    const newer = { ...listingPayload, energyRating: "A", location: { ...listingPayload.location, geo: { lat: 30.2, lon: -97.7 } }, financials: { askingPrice: 1, ebitda: 5 } };
    expect(listingEventProblem(event("listing", "12", newer))).toBeNull();
    expect(brokerEventProblem(event("broker", "5", { brokerId: "5", pronouns: "she/her" }))).toBeNull();
  });

  test("a used field missing or of the wrong type is still a problem", () => {
    const { businessType: _, ...withoutType } = listingPayload;
    expect(listingEventProblem(event("listing", "12", withoutType))).toContain("businessType");
    expect(listingEventProblem(event("listing", "12", { ...listingPayload, location: { ...listingPayload.location, city: 5 } }))).toContain("/location/city");
  });
});
