import { Type, type Static, type TSchema } from "@sinclair/typebox";
import {
  compilePattern,
  EXTERNAL_ID_PATTERN,
  RECORD_ID_PATTERN,
  SERVICE_ID_PATTERN,
  UUID_PATTERN,
} from "./patterns.ts";
import { Text } from "./text.ts";

/** Limits the spec leaves open ("not shown"); see docs/partner-api.md. */
export const Limits = {
  maxBodyBytes: 1_048_576,
  externalIdLength: 128,
  shortText: 200,
  longText: 20_000,
  bio: 5_000,
  url: 2_048,
  photos: 50,
  licenses: 50,
  serviceAreas: 100,
  money: 1e12,
  area: 1e9,
} as const;

/** A partner's own identifier: 1-128 characters, no control characters, no surrounding whitespace, not "." or "..". */
export const EXTERNAL_ID_RULE =
  "must be 1-128 characters with no control characters and no leading or trailing whitespace";
const externalIdRegex = compilePattern(EXTERNAL_ID_PATTERN);
export function isValidExternalId(id: string): boolean {
  return externalIdRegex.test(id);
}
/** Registered as a format (formats.ts), so bodies and paths check IDs with the same function ("." and ".." too). */
export const ExternalId = Type.String({
  format: "external-id",
  description: `External ID: ${EXTERNAL_ID_RULE}, and not "." or ".."`,
});

/** Path parameters, by name: the routes check them with the same patterns (the OpenAPI document shows these). */
export const PathParameters: Record<string, TSchema> = {
  externalBrokerId: ExternalId,
  externalListingId: ExternalId,
  officeId: Type.String({ pattern: RECORD_ID_PATTERN, description: "Office ID: a positive integer up to 2147483647" }),
  organizationId: Type.String({
    pattern: RECORD_ID_PATTERN,
    description: "Organization ID: a positive integer up to 2147483647",
  }),
  serviceListingId: Type.String({ pattern: SERVICE_ID_PATTERN, description: "serviceListingId: a positive integer" }),
  serviceBrokerId: Type.String({ pattern: SERVICE_ID_PATTERN, description: "serviceBrokerId: a positive integer" }),
  endpointId: ExternalId,
  deliveryId: Type.String({ pattern: UUID_PATTERN, description: "deliveryId: a UUID as the deliveries list shows it" }),
  email: Type.String({
    format: "email",
    description: "A person's e-mail address (percent-encoded in the path; compared lower-cased)",
  }),
};
export const isRecordId = (raw: string) => compilePattern(RECORD_ID_PATTERN).test(raw);
export const isServiceId = (raw: string) => compilePattern(SERVICE_ID_PATTERN).test(raw);

/**
 * JSON Schema keywords that only the OpenAPI document shows: the route parses such a value itself (trimming it,
 * answering with its own messages), so the validator must not see them. openapi.ts merges them in.
 */
export const DOCUMENTED_ONLY = "x-documented-only";

/** Lengths of free text count characters (code points), as the OpenAPI document says: see text.ts. */
export const ShortText = (description?: string) => Text({ minLength: 1, maxLength: Limits.shortText, description });
// The formats check the length in characters (code points), as the document's maxLength means it.
export const Email = Type.String({
  format: "email",
  description: "E-mail address, at most 254 characters",
  [DOCUMENTED_ONLY]: { maxLength: 254 },
});
export const HttpUrl = Type.String({
  format: "http-url",
  description: `Absolute http(s) URL, at most ${Limits.url} characters`,
  [DOCUMENTED_ONLY]: { maxLength: Limits.url },
});
export const CountryCode = Type.String({
  format: "country-code",
  description: "ISO 3166-1 alpha-2 country code, upper case (e.g. US)",
});
export const DateTime = Type.String({
  format: "date-time",
  description: "ISO 8601 date-time with a time zone (Z or an offset)",
});
/**
 * A date-time the API stores: written with a year from 1000 to 9998. PostgreSQL prints years below 100 in a form
 * JavaScript dates misread (0018 is invalid, 0001 becomes 2001), and an offset can push 9999 past PostgreSQL's
 * range, so such values are refused rather than corrupted or failed.
 */
export const RecordDateTime = Type.String({
  format: "date-time",
  pattern: "^(?:[1-8][0-9]{3}|9[0-8][0-9]{2}|99[0-8][0-9]|999[0-8])-",
  description: "ISO 8601 date-time with a time zone (Z or an offset), years 1000-9998",
});
export const Money = Type.Number({ minimum: 0, maximum: Limits.money, description: "Non-negative amount" });
/**
 * A phone number as people write them: an optional leading +, then 5-40 characters of digits, spaces and ().-,
 * starting with a digit or an opening parenthesis (an area code: (512) 555-0100) and ending with a digit.
 */
export const PHONE_PATTERN = "^\\+?[0-9(][0-9 ().-]{3,38}[0-9]$";
export const Phone = Type.String({
  pattern: PHONE_PATTERN,
  description:
    "Phone number: an optional leading +, then 5-40 characters of digits, spaces and ().-, starting with a digit or ( and ending with a digit; include the country code, e.g. +1 512 555 0100",
});

/** What every cursor the API hands out looks like: base64url without padding, never empty. */
export const PAGE_CURSOR_PATTERN = "^[A-Za-z0-9_-]+$";
export const isPageCursorText = (value: string): boolean => new RegExp(PAGE_CURSOR_PATTERN).test(value);
/**
 * A page cursor in a query. The document carries what a schema can (non-empty, base64url characters); that only a
 * nextCursor the API returned (for the same query) is valid is a rule of state, stated in the description. The
 * routes' cursor decoders check both (isPageCursorText), so every bad cursor gets the same message.
 */
export const PageCursor = (
  description = "Opaque; nextCursor of the previous page, unchanged (anything else, an empty value included, is refused with 400)",
) => Type.String({ description, [DOCUMENTED_ONLY]: { minLength: 1, pattern: PAGE_CURSOR_PATTERN } });

/** JSON Merge Patch: an optional field may be sent as null to clear it. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const Clearable = <T extends TSchema>(schema: T) => Type.Optional(Nullable(schema));

/** Stored JSON read back as it is: any keys (a Record; `additionalProperties` stated like on every object schema). */
export const OpenRecord = () => Type.Record(Type.String(), Type.Unknown(), { additionalProperties: true });

export const ErrorDetail = Type.Object({ path: Type.String(), message: Type.String() }, { additionalProperties: true });
export const ErrorResponse = Type.Object(
  {
    status: Type.Literal("error"),
    error: Type.String(),
    details: Type.Optional(Type.Array(ErrorDetail)),
    requestId: Type.Optional(Type.String()),
  },
  { additionalProperties: false, description: "Every error has this shape" },
);
export type ErrorResponse = Static<typeof ErrorResponse>;

/** Test mode (docs/sandbox.md): which of a partner's records a key reads and writes. The rules are in mode.ts. */
export const RECORD_MODES = ["live", "test"] as const;
export type RecordMode = (typeof RECORD_MODES)[number];
export const RecordModeSchema = Type.Union([Type.Literal("live"), Type.Literal("test")], {
  description:
    "live: written with a pss_live_ key, what buyers see; test: written with a pss_test_ key, never shown to buyers",
});

/** An organization of the partner with its offices: the IDs the lead-count routes take. */
export const PartnerOrganization = Type.Object(
  {
    organizationId: Type.Integer(),
    organizationName: Type.String(),
    offices: Type.Array(
      Type.Object(
        {
          officeId: Type.Integer(),
          officeName: Type.String(),
          isDefault: Type.Boolean({ description: "New brokers are assigned to the default office" }),
        },
        { additionalProperties: true },
      ),
    ),
  },
  { additionalProperties: true },
);
export type PartnerOrganization = Static<typeof PartnerOrganization>;

export const HealthResponse = Type.Object(
  {
    status: Type.Literal("success"),
    timestamp: DateTime,
    partnerId: Type.String({
      description:
        "The partner the key belongs to: the same for every key of the partner (live, test, rotated). pss-sync binds its checkpoint to it (docs/sync.md)",
    }),
    mode: RecordModeSchema,
    leadTracking: Type.Boolean({
      description: "Whether the key may read lead data: the lead-count routes, inquiries, lead.received",
    }),
    organizations: Type.Optional(
      Type.Array(PartnerOrganization, {
        description:
          "Keys with lead tracking only (absent otherwise): the partner's organizations and their offices, oldest first, the IDs GET /offices/{officeId}/leads/count and /organizations/{organizationId}/leads/count take",
      }),
    ),
  },
  { additionalProperties: false },
);
export type HealthResponse = Static<typeof HealthResponse>;

/** Error messages the API answers with, word for word (spec section 7 and our decisions). */
export const ErrorMessages = {
  unauthorized: "Unauthorized",
  brokerNotFound: "Broker not found",
  listingNotFound: "Listing not found",
  officeNotFound: "Office not found",
  organizationNotFound: "Organization not found",
  notFound: "Not found",
  methodNotAllowed: "Method not allowed",
  unsupportedMediaType: "Content-Type must be application/json",
  payloadTooLarge: "Request body is too large",
  malformedJson: "Request body is not valid JSON",
  rateLimited: "Too many requests",
  internal: "Internal server error",
  testModeOnly:
    "This endpoint works in test mode only: call it with a test key (pss_test_...); live records are never touched by it",
  previewUnavailable:
    "This preview link is not valid or has expired; read the record through the API with your test key for a fresh link",
} as const;
