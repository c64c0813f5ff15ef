// The processing report of a listing (issue 24, part 2): GET /partner/v1/listings/{externalListingId}/report.
// Every step from the write to the buyer's page, with its time and outcome, and one overall state. The rules are
// in ../listing-report.ts; docs/partner-api.md explains each state.
import { Type, type Static } from "@sinclair/typebox";
import { Nullable } from "./common.ts";
import { QualityScore, Warnings } from "./quality.ts";

export const REPORT_STATES = ["LIVE", "LIVE_WITH_WARNINGS", "PROCESSING", "NOT_VISIBLE", "FAILED"] as const;
export type ReportState = (typeof REPORT_STATES)[number];
export const ReportStateSchema = Type.Unsafe<ReportState>(
  Type.Union(
    REPORT_STATES.map((s) => Type.Literal(s)),
    {
      description:
        "LIVE: buyers see it, nothing to fix; LIVE_WITH_WARNINGS: buyers see it, warnings say what they miss; PROCESSING: not shown yet, steps still running; NOT_VISIBLE: kept from buyers on purpose (reasons say why); FAILED: every photo failed, buyers would see it without any",
    },
  ),
);

/** Why a listing is not LIVE: a closed list. */
export const REPORT_REASON_CODES = [
  "STATUS_NOT_VISIBLE",
  "TEST_MODE",
  "AWAITING_INDEX",
  "PHOTOS_PENDING",
  "ALL_PHOTOS_FAILED",
  "HAS_WARNINGS",
] as const;
export type ReportReasonCode = (typeof REPORT_REASON_CODES)[number];
export const ReportReason = Type.Object(
  {
    code: Type.Unsafe<ReportReasonCode>(
      Type.Union(
        REPORT_REASON_CODES.map((c) => Type.Literal(c)),
        { description: `One of ${REPORT_REASON_CODES.join(", ")}` },
      ),
    ),
    message: Type.String(),
  },
  { additionalProperties: false },
);
export type ReportReason = Static<typeof ReportReason>;

export const REPORT_STEP_NAMES = ["stored", "photo", "description.rewritten", "indexed", "visible", "sitemap"] as const;
export type ReportStepName = (typeof REPORT_STEP_NAMES)[number];
export const REPORT_STEP_OUTCOMES = ["done", "pending", "failed", "skipped"] as const;
export type ReportStepOutcome = (typeof REPORT_STEP_OUTCOMES)[number];

export const ReportStep = Type.Object(
  {
    step: Type.Unsafe<ReportStepName>(
      Type.Union(
        REPORT_STEP_NAMES.map((s) => Type.Literal(s)),
        { description: `One of ${REPORT_STEP_NAMES.join(", ")}; one photo step per photo` },
      ),
    ),
    outcome: Type.Unsafe<ReportStepOutcome>(
      Type.Union(
        REPORT_STEP_OUTCOMES.map((s) => Type.Literal(s)),
        {
          description:
            "done; pending (still running); failed (message says what to do); skipped (does not apply, message says why)",
        },
      ),
    ),
    at: Nullable(
      Type.String({ description: "When the step finished (ISO 8601, UTC); null while pending or when skipped" }),
    ),
    message: Type.String(),
    path: Type.Optional(Type.String({ description: "photo steps: the photo's path, photos[i]" })),
    url: Type.Optional(
      Type.String({ description: "photo steps: the partner's image URL; visible and sitemap: the public page" }),
    ),
    width: Type.Optional(Nullable(Type.Integer())),
    height: Type.Optional(Nullable(Type.Integer())),
  },
  { additionalProperties: false },
);
export type ReportStep = Static<typeof ReportStep>;

export const ListingReport = Type.Object(
  {
    externalListingId: Type.String(),
    serviceListingId: Type.Integer(),
    serviceListingUrl: Type.String(),
    version: Type.Integer({ description: "The listing's version the report describes" }),
    state: ReportStateSchema,
    reasons: Type.Array(ReportReason, { description: "Why the state is not LIVE; empty when LIVE" }),
    steps: Type.Array(ReportStep),
    warnings: Warnings,
    qualityScore: QualityScore,
  },
  { additionalProperties: false },
);
export type ListingReport = Static<typeof ListingReport>;

export const ListingReportResponse = Type.Object(
  { status: Type.Literal("success"), report: ListingReport },
  { additionalProperties: false },
);
