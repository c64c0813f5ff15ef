import { Type, type Static } from "@sinclair/typebox";
import { DOCUMENTED_ONLY, Email, Limits, Phone } from "./common.ts";
import { Text } from "./text.ts";
import { NON_BLANK_MULTILINE_PATTERN, NON_BLANK_SINGLE_LINE_PATTERN } from "./patterns.ts";

export const LEAD_MESSAGE_MAX = 5_000;

/**
 * Body of POST /v1/listings/{serviceListingId}/leads (public: a buyer's inquiry). `website` is a honeypot:
 * the form hides it from people, so a value means a bot; such a request gets a normal-looking 202 and nothing
 * is stored or forwarded.
 */
export const LeadBody = Type.Object(
  {
    // The intake trims name and message and refuses them blank, with its own message.
    name: Text({
      minLength: 1,
      maxLength: Limits.shortText,
      description: "Buyer's name (not blank)",
      [DOCUMENTED_ONLY]: { pattern: NON_BLANK_SINGLE_LINE_PATTERN },
    }),
    email: Email,
    phone: Type.Optional(Phone),
    message: Text({
      minLength: 1,
      maxLength: LEAD_MESSAGE_MAX,
      description: "The buyer's question to the broker (not blank)",
      [DOCUMENTED_ONLY]: { pattern: NON_BLANK_MULTILINE_PATTERN },
    }),
    website: Type.Optional(Text({ maxLength: Limits.url, description: "Leave out or empty (spam trap)" })),
  },
  { additionalProperties: false },
);
export type LeadBody = Static<typeof LeadBody>;

export const LeadAccepted = Type.Object(
  { status: Type.Literal("success"), leadId: Type.String({ format: "uuid" }) },
  { additionalProperties: false },
);
export type LeadAccepted = Static<typeof LeadAccepted>;

export const LeadCountQuery = Type.Object(
  {
    startDate: Type.Optional(
      Type.String({
        format: "date-time",
        description:
          "ISO 8601 date-time with a time zone, inclusive; omitted = from the beginning. Must not be after endDate (400)",
      }),
    ),
    endDate: Type.Optional(
      Type.String({
        format: "date-time",
        description: "ISO 8601 date-time with a time zone, exclusive; omitted = now",
      }),
    ),
  },
  { additionalProperties: false },
);

export const OfficeLeadCount = Type.Object(
  {
    status: Type.Literal("success"),
    officeId: Type.Integer(),
    officeName: Type.String(),
    totalLeads: Type.Integer(),
  },
  { additionalProperties: false },
);
export type OfficeLeadCount = Static<typeof OfficeLeadCount>;

export const OrganizationLeadCount = Type.Object(
  {
    status: Type.Literal("success"),
    organizationId: Type.Integer(),
    organizationName: Type.String(),
    totalLeads: Type.Integer(),
    officeBreakdown: Type.Array(
      Type.Object(
        { officeId: Type.Integer(), officeName: Type.String(), totalLeads: Type.Integer() },
        { additionalProperties: true },
      ),
    ),
  },
  { additionalProperties: false },
);
export type OrganizationLeadCount = Static<typeof OrganizationLeadCount>;

// lead.submitted, the event of a stored lead, is in events/lead-events.ts (the event catalog).
