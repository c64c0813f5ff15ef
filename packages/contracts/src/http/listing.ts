import { Type, type Static } from "@sinclair/typebox";
import { InlineBroker, MediaStatus } from "./broker.ts";
import { QualityScore, Warnings } from "./quality.ts";
import { Text } from "./text.ts";
import {
  Clearable,
  CountryCode,
  ExternalId,
  Limits,
  Money,
  Nullable,
  HttpUrl,
  OpenRecord,
  RecordDateTime,
  RecordModeSchema,
  PageCursor,
  ShortText,
} from "./common.ts";

export const LISTING_STATUSES = [
  "DRAFT",
  "FOR_SALE",
  "REVIEWING_OFFERS",
  "PENDING_CONTRACT",
  "UNDER_CONTRACT",
  "SOLD",
  "ARCHIVED",
] as const;
export type ListingStatus = (typeof LISTING_STATUSES)[number];
/** Spec section 3: visible to buyers and in search. */
export const BUYER_VISIBLE_STATUSES: readonly ListingStatus[] = [
  "FOR_SALE",
  "REVIEWING_OFFERS",
  "PENDING_CONTRACT",
  "UNDER_CONTRACT",
];

export const VISIBILITIES = ["SHOW_FULL_ADDRESS", "SHOW_CITY_STATE", "SHOW_STATE_ONLY"] as const;
export type Visibility = (typeof VISIBILITIES)[number];
export const PROPERTY_KINDS = ["OWNED", "RENTED", "NEGOTIABLE"] as const;
/** Spec shows only MONTHLY; the others are our decision (docs/partner-api.md). */
export const RENT_FREQUENCIES = ["WEEKLY", "MONTHLY", "QUARTERLY", "ANNUALLY"] as const;

const literalUnion = <T extends readonly string[]>(values: T, description: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v as T[number])),
    { description: `${description}: one of ${values.join(", ")}` },
  );

export const ListingStatusSchema = literalUnion(LISTING_STATUSES, "Listing status");
export const VisibilitySchema = literalUnion(VISIBILITIES, "Address visibility");

export const Location = Type.Object(
  {
    streetAddress1: Clearable(ShortText()),
    city: Type.Optional(ShortText()),
    state: Type.Optional(ShortText()),
    postalCode: Clearable(
      Type.String({
        minLength: 1,
        maxLength: 20,
        pattern: "^[A-Za-z0-9][A-Za-z0-9 -]*$",
        description: "Postal code: letters, digits, spaces and hyphens, e.g. 78701 or SW1A 1AA",
      }),
    ),
    country: Type.Optional(CountryCode),
    visibility: Type.Optional(VisibilitySchema),
  },
  { additionalProperties: false },
);

export const Financials = Type.Object(
  {
    askingPrice: Clearable(Money),
    revenue: Clearable(Money),
    sde: Clearable(Money),
    inventory: Clearable(Money),
    ffande: Clearable(Money),
  },
  { additionalProperties: false },
);

export const RentData = Type.Object(
  {
    amount: Clearable(Money),
    frequency: Clearable(literalUnion(RENT_FREQUENCIES, "Rent frequency")),
    leaseRenewable: Clearable(Type.Boolean()),
    leaseExpiration: Clearable(RecordDateTime),
  },
  { additionalProperties: false },
);

export const Property = Type.Object(
  {
    propertyKind: Clearable(literalUnion(PROPERTY_KINDS, "Property kind")),
    areaSqft: Clearable(Type.Number({ minimum: 0, maximum: Limits.area })),
    rentData: Clearable(RentData),
  },
  { additionalProperties: false },
);

export const Financing = Type.Object(
  {
    financingAvailable: Clearable(Type.Boolean()),
    sbaPrequalified: Clearable(Type.Boolean()),
    minimumDownPayment: Clearable(Money),
  },
  { additionalProperties: false },
);

export const Photo = Type.Object(
  {
    url: HttpUrl,
    sortKey: Type.Integer({ minimum: -2147483648, maximum: 2147483647, description: "Lower appears first" }),
  },
  { additionalProperties: false },
);
export type Photo = Static<typeof Photo>;

/**
 * Body of PUT /partner/v1/listings/{externalListingId}. On create, status, businessType, location (city, state,
 * country, visibility) and one of brokerExternalId / broker are required; on update only what changes.
 */
export const ListingBody = Type.Object(
  {
    brokerExternalId: Type.Optional(ExternalId),
    broker: Type.Optional(InlineBroker),
    status: Type.Optional(ListingStatusSchema),
    businessType: Type.Optional(ShortText("e.g. Restaurant, Retail, Service Business, E-commerce, Manufacturing")),
    location: Type.Optional(Location),
    title: Clearable(ShortText()),
    description: Clearable(Text({ maxLength: Limits.longText })),
    establishedAt: Clearable(RecordDateTime),
    financials: Clearable(Financials),
    property: Clearable(Property),
    financing: Clearable(Financing),
    photos: Clearable(Type.Array(Photo, { maxItems: Limits.photos })),
  },
  { additionalProperties: false },
);
export type ListingBody = Static<typeof ListingBody>;

export const ListingPutResponse = Type.Object(
  {
    status: Type.Literal("success"),
    message: Type.Union([Type.Literal("Listing created"), Type.Literal("Listing updated")]),
    serviceListingId: Type.Integer(),
    serviceListingUrl: Type.String(),
    warnings: Warnings,
    qualityScore: QualityScore,
  },
  { additionalProperties: false },
);
export type ListingPutResponse = Static<typeof ListingPutResponse>;

export const IndexState = Type.Union([Type.Literal("pending"), Type.Literal("indexed"), Type.Literal("removed")]);

/** The stored listing as the partner read-back returns it (after merges). */
export const ListingRecord = Type.Object(
  {
    externalListingId: Type.String(),
    serviceListingId: Type.Integer(),
    serviceListingUrl: Type.String({
      description: "The public page; for a test record a signed, short-lived preview link",
    }),
    mode: RecordModeSchema,
    brokerExternalId: Type.String(),
    serviceBrokerId: Type.String(),
    status: ListingStatusSchema,
    businessType: Type.String(),
    location: Type.Object(
      {
        streetAddress1: Nullable(Type.String()),
        city: Type.String(),
        state: Type.String(),
        postalCode: Nullable(Type.String()),
        country: Type.String(),
        visibility: VisibilitySchema,
      },
      { additionalProperties: true },
    ),
    title: Nullable(Type.String()),
    description: Nullable(Type.String()),
    descriptionOptimized: Nullable(Type.String()),
    establishedAt: Nullable(Type.String()),
    financials: OpenRecord(),
    property: OpenRecord(),
    financing: OpenRecord(),
    photos: Type.Array(
      Type.Composite([Type.Object({ sortKey: Type.Integer() }), MediaStatus], { additionalProperties: true }),
    ),
    statusHistory: Type.Array(
      Type.Object(
        { from: Nullable(Type.String()), to: Type.String(), changedAt: Type.String() },
        { additionalProperties: true },
      ),
    ),
    searchIndex: Type.Object({ state: IndexState }, { additionalProperties: true }),
    warnings: Warnings,
    qualityScore: QualityScore,
    createdAt: Type.String(),
    updatedAt: Type.String(),
  },
  { additionalProperties: true },
);
export type ListingRecord = Static<typeof ListingRecord>;

/** Query of the partner's list endpoints. Validated by the route schema, so these patterns are the rule itself. */
export const PageQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.String({
        pattern: "^0*(?:[1-9][0-9]?|[1-4][0-9]{2}|500)$",
        description: "an integer from 1 to 500 (default 100)",
      }),
    ),
    cursor: Type.Optional(PageCursor()),
    updatedSince: Type.Optional(
      Type.String({
        format: "date-time",
        description: "ISO 8601 date-time with a time zone (Z or an offset), e.g. 2024-05-01T00:00:00Z",
      }),
    ),
  },
  { additionalProperties: false },
);
