// The parts of event payloads the indexer relies on. Anything that fails these checks is a poison message.
import { Type, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { ListingStatusSchema, VisibilitySchema, type AnyEventEnvelope } from "@pss/contracts";

const NullableString = Type.Union([Type.String(), Type.Null()]);

export const ListingEventPayload = Type.Object({
  listingId: Type.Integer({ minimum: 1 }),
  brokerId: Type.String(),
  status: ListingStatusSchema,
  businessType: Type.String(),
  title: NullableString,
  description: NullableString,
  establishedAt: NullableString,
  location: Type.Object({
    streetAddress1: Type.Optional(NullableString),
    city: Type.String(),
    state: Type.String(),
    postalCode: Type.Optional(NullableString),
    country: Type.String(),
    visibility: VisibilitySchema,
  }),
  financials: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  // Optional: events written before the search filter on financing existed may lack it.
  financing: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
  updatedAt: Type.String(),
});
export type ListingEventPayload = Static<typeof ListingEventPayload>;

export const BrokerEventPayload = Type.Object({ brokerId: Type.String() });

export const LISTING_UPSERTED = "listing.upserted";
export const BROKER_UPSERTED = "broker.upserted";

/** null when fine, else why the event can never be indexed. */
export function listingEventProblem(event: AnyEventEnvelope): string | null {
  if (!Value.Check(ListingEventPayload, event.payload)) {
    const first = [...Value.Errors(ListingEventPayload, event.payload)][0];
    return `listing payload is not valid: ${first ? `${first.path || "/"} ${first.message}` : "invalid"}`;
  }
  if (String(event.payload.listingId) !== event.aggregateId) return "payload listingId differs from aggregateId";
  return null;
}

export function brokerEventProblem(event: AnyEventEnvelope): string | null {
  if (!Value.Check(BrokerEventPayload, event.payload)) return "broker payload has no brokerId";
  if (event.payload.brokerId !== event.aggregateId || !/^\d{1,18}$/.test(event.aggregateId)) return "broker aggregateId is not a broker ID";
  return null;
}
