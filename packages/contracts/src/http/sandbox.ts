// Integrating without risk (docs/sandbox.md): dry-run answers, change history, and the test-mode-only routes.
import { Type, type Static } from "@sinclair/typebox";
import { DOCUMENTED_ONLY, Email, Limits, Nullable, PageCursor, Phone, RecordDateTime } from "./common.ts";
import { LEAD_MESSAGE_MAX } from "./lead.ts";
import { Text } from "./text.ts";
import { QualityScore, Warnings } from "./quality.ts";

/**
 * Query of the broker and listing PUTs. dryRun is read by the route itself (its own 400 message); the document
 * shows the two values it accepts.
 */
export const PutQuery = Type.Object(
  {
    dryRun: Type.Optional(
      Type.String({
        description:
          "true: validate and compare with the stored record only; nothing is written or announced, the answer is a DryRunResponse. false (the default): a normal PUT",
        [DOCUMENTED_ONLY]: { enum: ["true", "false"] },
      }),
    ),
  },
  { additionalProperties: false },
);

export const DRY_RUN_OUTCOMES = ["wouldCreate", "wouldUpdate", "noChange"] as const;
export type DryRunOutcome = (typeof DRY_RUN_OUTCOMES)[number];

/** A valid PUT ?dryRun=true: what the same PUT would do now. Invalid bodies get the PUT's own 400/404. */
export const DryRunResponse = Type.Object(
  {
    status: Type.Literal("success"),
    dryRun: Type.Literal(true),
    outcome: Type.Union([Type.Literal("wouldCreate"), Type.Literal("wouldUpdate"), Type.Literal("noChange")], {
      description:
        "wouldCreate: the external ID is new (the PUT would answer 201); wouldUpdate: the PUT would change the record; noChange: an identical repeat",
    }),
    changedPaths: Type.Array(Type.String(), {
      description:
        "Field paths the PUT would change, sorted: nested fields dotted (financials.askingPrice), lists whole (photos); an inline broker's under broker. (broker.phone)",
    }),
    warnings: Warnings,
    qualityScore: QualityScore,
  },
  { additionalProperties: false },
);
export type DryRunResponse = Static<typeof DryRunResponse>;

/** Longer strings in a history entry are cut to this many characters (code points), with "…" appended. */
export const HISTORY_TEXT_LIMIT = 500;

export const FieldChange = Type.Object(
  {
    path: Type.String({ description: "Dotted field path (location.city); a list is one path (photos)" }),
    from: Type.Unknown({ description: "The value before; null when it was not set" }),
    to: Type.Unknown({ description: "The value after; null when it was removed" }),
    truncated: Type.Optional(
      Type.Literal(true, {
        description: `Present when a text in from or to was longer than ${HISTORY_TEXT_LIMIT} characters and was cut`,
      }),
    ),
  },
  { additionalProperties: true },
);
export type FieldChange = Static<typeof FieldChange>;

const historyEntryFields = {
  version: Type.Integer({ description: "The record's version this change made (1 = created)" }),
  changedAt: Type.String({ description: "When the change was written (ISO 8601, UTC)" }),
  keyId: Nullable(Type.String({ description: "ID of the API key that wrote it (as in the admin CLI's keys list)" })),
  requestId: Nullable(Type.String({ description: "The request's X-Request-Id" })),
  created: Type.Boolean({ description: "true for the version that created the record" }),
  changes: Type.Array(FieldChange),
};

// Nested in the history answers: open to new fields, like the read models.
export const BrokerHistoryEntry = Type.Object(historyEntryFields, { additionalProperties: true });
export type BrokerHistoryEntry = Static<typeof BrokerHistoryEntry>;
export const StatusChange = Type.Object(
  { from: Nullable(Type.String()), to: Type.String() },
  { additionalProperties: true },
);
export const ListingHistoryEntry = Type.Object(
  {
    ...historyEntryFields,
    statusChange: Type.Union([StatusChange, Type.Null()], { description: "The status move this change made, if any" }),
  },
  { additionalProperties: true },
);
export type ListingHistoryEntry = Static<typeof ListingHistoryEntry>;

/** Query of the history routes: the partner list pages' limit and cursor conventions. */
export const HistoryQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.String({
        pattern: "^0*(?:[1-9][0-9]?|[1-4][0-9]{2}|500)$",
        description: "an integer from 1 to 500 (default 100)",
      }),
    ),
    cursor: Type.Optional(PageCursor()),
  },
  { additionalProperties: false },
);

export const ListingHistoryResponse = Type.Object(
  { status: Type.Literal("success"), results: Type.Array(ListingHistoryEntry), nextCursor: Nullable(Type.String()) },
  { additionalProperties: false },
);
export const BrokerHistoryResponse = Type.Object(
  { status: Type.Literal("success"), results: Type.Array(BrokerHistoryEntry), nextCursor: Nullable(Type.String()) },
  { additionalProperties: false },
);

/**
 * Body of POST /partner/v1/test/listings/{externalListingId}/leads (test keys only): a simulated buyer inquiry.
 * Every field is optional; submittedAt lets a partner test lead-count date ranges.
 */
export const SimulatedLeadBody = Type.Object(
  {
    name: Type.Optional(
      Text({ minLength: 1, maxLength: Limits.shortText, description: "Buyer's name (default: Test Buyer)" }),
    ),
    email: Type.Optional(Email),
    phone: Type.Optional(Phone),
    message: Type.Optional(
      Text({ minLength: 1, maxLength: LEAD_MESSAGE_MAX, description: "The inquiry (default: a fixed test message)" }),
    ),
    submittedAt: Type.Optional(RecordDateTime),
  },
  { additionalProperties: false },
);
export type SimulatedLeadBody = Static<typeof SimulatedLeadBody>;

export const TestDataDeleted = Type.Object(
  {
    status: Type.Literal("success"),
    deleted: Type.Object(
      { listings: Type.Integer(), brokers: Type.Integer(), leads: Type.Integer() },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: false },
);
export type TestDataDeleted = Static<typeof TestDataDeleted>;
