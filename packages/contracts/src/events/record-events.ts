// listing.upserted and broker.upserted (Topics.listingEvents, Topics.brokerEvents; key: the record's ID): the whole
// state of the record after a write by the API, with the record's version on the envelope. Consumers act on the
// newest version only (docs/events.md).
import { Type, type Static } from "@sinclair/typebox";
import { Topics } from "../topics.ts";
import { ListingStatusSchema, VisibilitySchema } from "../http/listing.ts";
import { defineEvent, pickReader } from "./define-event.ts";

const NullableString = Type.Union([Type.String(), Type.Null()]);
/** A part of the partner's document, already checked against the partner API's body schema. */
const DocumentPart = Type.Record(Type.String(), Type.Unknown(), { additionalProperties: true });

export const ListingUpsertedPayload = Type.Object(
  {
    listingId: Type.Integer({ minimum: 1 }),
    externalId: Type.String(),
    brokerId: Type.String(),
    status: ListingStatusSchema,
    businessType: Type.String(),
    title: NullableString,
    description: NullableString,
    establishedAt: NullableString,
    location: Type.Object(
      {
        streetAddress1: Type.Optional(NullableString),
        city: Type.String(),
        state: Type.String(),
        postalCode: Type.Optional(NullableString),
        country: Type.String(),
        visibility: VisibilitySchema,
      },
      { additionalProperties: false },
    ),
    // Readers accept null too: events of older producers carried null for "none".
    financials: Type.Union([DocumentPart, Type.Null()]),
    property: Type.Union([DocumentPart, Type.Null()]),
    financing: Type.Union([DocumentPart, Type.Null()]),
    photos: Type.Array(Type.Object({ url: Type.String(), sortKey: Type.Integer() }, { additionalProperties: false })),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { additionalProperties: false },
);
export type ListingUpsertedPayload = Static<typeof ListingUpsertedPayload>;

export const ListingUpserted = defineEvent({
  type: "listing.upserted",
  version: 1,
  topic: Topics.listingEvents,
  aggregateType: "listing",
  payload: ListingUpsertedPayload,
  // Added after the first events were written: older events lack them. `property` was always written, but the
  // indexer reads it only since issue 41 (realEstateIncluded): a payload without it is "not owned", never poison.
  optionalInReader: ["financing", "property"],
});

/** What the indexer reads of listing.upserted (the search document, services/indexer). */
export const ListingUpsertedIndexerReader = pickReader(ListingUpserted, [
  "listingId",
  "brokerId",
  "status",
  "businessType",
  "title",
  "description",
  "establishedAt",
  "location",
  "financials",
  "property",
  "financing",
  "updatedAt",
]);
export type ListingUpsertedIndexerReader = Static<typeof ListingUpsertedIndexerReader>;

/** What the change feed reads of listing.upserted (packages/service-kit feed-events.ts). */
export const ListingUpsertedFeedReader = pickReader(ListingUpserted, ["externalId", "brokerId", "status"]);
export type ListingUpsertedFeedReader = Static<typeof ListingUpsertedFeedReader>;

/** What the media service reads of listing.upserted: which listing to look at again. */
export const ListingUpsertedMediaReader = pickReader(ListingUpserted, ["listingId"]);

export const BrokerUpsertedPayload = Type.Object(
  {
    brokerId: Type.String(),
    externalId: Type.String(),
    officeId: Type.Integer(),
    name: Type.String(),
    phone: NullableString,
    avatarUrl: NullableString,
    profile: DocumentPart,
    licenses: Type.Array(DocumentPart),
    serviceAreas: Type.Array(DocumentPart),
  },
  // E-mail addresses stay off the bus: no consumer needs them to index or process media.
  { additionalProperties: false },
);
export type BrokerUpsertedPayload = Static<typeof BrokerUpsertedPayload>;

export const BrokerUpserted = defineEvent({
  type: "broker.upserted",
  version: 1,
  topic: Topics.brokerEvents,
  aggregateType: "broker",
  payload: BrokerUpsertedPayload,
});

/** What the indexer and the media service read of broker.upserted: which broker to look at again. */
export const BrokerUpsertedIdReader = pickReader(BrokerUpserted, ["brokerId"]);
/** What the change feed reads of broker.upserted. */
export const BrokerUpsertedFeedReader = pickReader(BrokerUpserted, ["externalId"]);
export type BrokerUpsertedFeedReader = Static<typeof BrokerUpsertedFeedReader>;

/** listing.upserted's payload from the document as written and what the database assigned. */
export function listingUpsertedPayload(a: {
  listingId: number;
  externalId: string;
  brokerId: string;
  document: {
    status: ListingUpsertedPayload["status"];
    businessType: string;
    title?: string;
    description?: string;
    establishedAt?: string;
    location: ListingUpsertedPayload["location"];
    financials?: object;
    property?: object;
    financing?: object;
    photos?: { url: string; sortKey: number }[];
  };
  createdAt: Date;
  updatedAt: Date;
}): ListingUpsertedPayload {
  const d = a.document;
  return {
    externalId: a.externalId,
    brokerId: a.brokerId,
    status: d.status,
    businessType: d.businessType,
    title: d.title ?? null,
    description: d.description ?? null,
    establishedAt: d.establishedAt ?? null,
    location: d.location,
    financials: (d.financials ?? {}) as Record<string, unknown>,
    property: (d.property ?? {}) as Record<string, unknown>,
    financing: (d.financing ?? {}) as Record<string, unknown>,
    photos: d.photos ?? [],
    listingId: a.listingId,
    createdAt: a.createdAt.toISOString(),
    updatedAt: a.updatedAt.toISOString(),
  };
}

/** broker.upserted's payload from the document as written. */
export function brokerUpsertedPayload(a: {
  brokerId: string;
  externalId: string;
  officeId: number;
  document: {
    name: string;
    phone?: string;
    avatarUrl?: string;
    profile?: object;
    licenses?: object[];
    serviceAreas?: object[];
  };
}): BrokerUpsertedPayload {
  const d = a.document;
  return {
    brokerId: a.brokerId,
    externalId: a.externalId,
    officeId: a.officeId,
    name: d.name,
    phone: d.phone ?? null,
    avatarUrl: d.avatarUrl ?? null,
    profile: (d.profile ?? {}) as Record<string, unknown>,
    licenses: (d.licenses ?? []) as Record<string, unknown>[],
    serviceAreas: (d.serviceAreas ?? []) as Record<string, unknown>[],
  };
}
