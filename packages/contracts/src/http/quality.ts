// Quality warnings and the quality score (issue 24): never blocking, carried by every listing and broker PUT answer
// (dry runs included) and by the read-back. The codes are a closed list: a new code is a contract change.
// The rules that produce them are in ../quality-rules.ts; the rubric is in docs/partner-api.md.
import { Type, type Static } from "@sinclair/typebox";

export const LISTING_WARNING_CODES = [
  "PHOTOS_TOO_FEW",
  "PHOTO_TOO_NARROW",
  "PHOTO_FAILED",
  "DESCRIPTION_MISSING",
  "DESCRIPTION_TOO_SHORT",
  "TITLE_MISSING",
  "ASKING_PRICE_MISSING",
  "FINANCIALS_INCOMPLETE",
  "POSTAL_CODE_MISMATCH",
  "STREET_ADDRESS_MISSING",
  "BROKER_PHONE_MISSING",
] as const;

export const BROKER_WARNING_CODES = [
  "BROKER_PHONE_MISSING",
  "AVATAR_MISSING",
  "AVATAR_TOO_SMALL",
  "AVATAR_FAILED",
  "BIO_MISSING",
  "BIO_TOO_SHORT",
  "LICENSE_MISSING",
] as const;

/** Every code either record may carry, in one closed list (BROKER_PHONE_MISSING is shared). */
export const WARNING_CODES = [
  ...new Set([...LISTING_WARNING_CODES, ...BROKER_WARNING_CODES]),
] as readonly WarningCode[];
export type ListingWarningCode = (typeof LISTING_WARNING_CODES)[number];
export type BrokerWarningCode = (typeof BROKER_WARNING_CODES)[number];
export type WarningCode = ListingWarningCode | BrokerWarningCode;

export const WarningCodeSchema = Type.Unsafe<WarningCode>(
  Type.Union(
    WARNING_CODES.map((c) => Type.Literal(c)),
    { description: `Warning code, a closed list: ${WARNING_CODES.join(", ")}` },
  ),
);

export const QualityWarning = Type.Object(
  {
    path: Type.String({
      description:
        "The field a buyer misses or that needs attention, as in error details (photos[2], description, broker.phone)",
    }),
    code: WarningCodeSchema,
    message: Type.String({ description: "What is wrong and what to do, in English" }),
  },
  {
    additionalProperties: false,
    description: "Never blocking: the record was (or would be) written; a buyer would miss this",
  },
);
export type QualityWarning = Static<typeof QualityWarning>;

export const Warnings = Type.Array(QualityWarning, {
  description: "Quality warnings of the record as it stands (after this write); empty when nothing is missing",
});
export const QualityScore = Type.Integer({
  minimum: 0,
  maximum: 100,
  description: "0-100: 100 minus the points each warning costs (rubric in docs/partner-api.md)",
});

export interface Quality {
  warnings: QualityWarning[];
  qualityScore: number;
}
