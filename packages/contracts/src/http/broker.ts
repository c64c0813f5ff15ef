import { Type, type Static } from "@sinclair/typebox";
import { Text } from "./text.ts";
import { QualityScore, Warnings } from "./quality.ts";
import {
  Clearable,
  CountryCode,
  Email,
  ExternalId,
  HttpUrl,
  Limits,
  Nullable,
  Phone,
  RecordModeSchema,
  ShortText,
} from "./common.ts";

export const BrokerProfile = Type.Object(
  {
    bio: Clearable(Text({ maxLength: Limits.bio })),
    website: Clearable(HttpUrl),
    linkedInUrl: Clearable(HttpUrl),
  },
  { additionalProperties: false },
);

export const License = Type.Object(
  {
    licenseNumber: Type.Optional(ShortText()),
    state: Type.Optional(ShortText()),
    country: Type.Optional(CountryCode),
  },
  { additionalProperties: false, minProperties: 1, description: "at least one of licenseNumber, state, country" },
);
export type License = Static<typeof License>;

export const ServiceArea = Type.Object(
  {
    city: Type.Optional(ShortText()),
    county: Type.Optional(ShortText()),
    state: Type.Optional(ShortText()),
    country: Type.Optional(CountryCode),
  },
  {
    additionalProperties: false,
    description: "Specified by city, by county or by state (at least one of them)",
    // Checked by the broker service with its own message; the validator ignores anyOf on an object schema.
    anyOf: [{ required: ["city"] }, { required: ["county"] }, { required: ["state"] }],
  },
);
export type ServiceArea = Static<typeof ServiceArea>;

const brokerFields = {
  name: ShortText("Full name"),
  email: Email,
  phone: Clearable(Phone),
  avatarUrl: Clearable(HttpUrl),
  forwardingEmail: Clearable(Email),
  profile: Clearable(BrokerProfile),
  licenses: Clearable(Type.Array(License, { maxItems: Limits.licenses })),
  serviceAreas: Clearable(Type.Array(ServiceArea, { maxItems: Limits.serviceAreas })),
};

/** Body of PUT /partner/v1/brokers/{externalBrokerId}. name and email are required on create and update. */
export const BrokerBody = Type.Object(brokerFields, { additionalProperties: false });
export type BrokerBody = Static<typeof BrokerBody>;

/** A broker carried inside a listing. */
export const InlineBroker = Type.Object(
  { externalBrokerId: ExternalId, ...brokerFields },
  { additionalProperties: false },
);
export type InlineBroker = Static<typeof InlineBroker>;

export const BrokerPutResponse = Type.Object(
  {
    status: Type.Literal("success"),
    message: Type.Union([Type.Literal("Broker created"), Type.Literal("Broker updated")]),
    serviceBrokerId: Type.String(),
    serviceProfileUrl: Type.String(),
    warnings: Warnings,
    qualityScore: QualityScore,
  },
  { additionalProperties: false },
);
export type BrokerPutResponse = Static<typeof BrokerPutResponse>;

export const MediaState = Type.Union([Type.Literal("pending"), Type.Literal("ready"), Type.Literal("failed")]);
export const MediaVariant = Type.Object(
  { width: Type.Integer(), height: Type.Integer(), format: Type.String(), url: Type.String() },
  { additionalProperties: true },
);
export const MediaStatus = Type.Object(
  {
    url: Type.String(),
    state: MediaState,
    failureReason: Nullable(Type.String()),
    warning: Nullable(Type.String()),
    width: Nullable(Type.Integer()),
    height: Nullable(Type.Integer()),
    variants: Type.Array(MediaVariant),
  },
  { additionalProperties: true },
);

/** The stored broker as the partner read-back returns it. */
export const BrokerRecord = Type.Object(
  {
    externalBrokerId: Type.String(),
    serviceBrokerId: Type.String(),
    serviceProfileUrl: Type.String({
      description: "The public profile; for a test record a signed, short-lived preview link",
    }),
    mode: RecordModeSchema,
    officeId: Type.Integer(),
    name: Type.String(),
    email: Type.String(),
    phone: Nullable(Type.String()),
    avatarUrl: Nullable(Type.String()),
    forwardingEmail: Nullable(Type.String()),
    profile: Type.Object(
      {
        bio: Type.Optional(Type.String()),
        website: Type.Optional(Type.String()),
        linkedInUrl: Type.Optional(Type.String()),
      },
      { additionalProperties: true },
    ),
    licenses: Type.Array(License),
    serviceAreas: Type.Array(ServiceArea),
    avatar: Nullable(MediaStatus),
    warnings: Warnings,
    qualityScore: QualityScore,
    createdAt: Type.String(),
    updatedAt: Type.String(),
  },
  { additionalProperties: true },
);
export type BrokerRecord = Static<typeof BrokerRecord>;
