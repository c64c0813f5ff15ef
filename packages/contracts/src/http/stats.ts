// Per-listing buyer statistics (issue 24, part 3): GET /partner/v1/listings/{externalListingId}/stats.
import { Type, type Static } from "@sinclair/typebox";

export const ListingStatsDay = Type.Object(
  {
    date: Type.String({ description: "The UTC day, YYYY-MM-DD" }),
    views: Type.Integer({ minimum: 0, description: "Page views: one per visitor per day, known bots excluded" }),
    impressions: Type.Integer({
      minimum: 0,
      description: "Times the listing was shown in buyers' search results (bots excluded)",
    }),
    inquiries: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: "Leads received that day; only for keys with lead tracking (counts only, never lead details)",
      }),
    ),
  },
  { additionalProperties: false },
);

export const ListingStatsResponse = Type.Object(
  {
    status: Type.Literal("success"),
    externalListingId: Type.String(),
    serviceListingId: Type.Integer(),
    startDate: Type.String({ description: "First day of the answer (UTC, YYYY-MM-DD)" }),
    endDate: Type.String({ description: "Last day of the answer (UTC, YYYY-MM-DD), inclusive" }),
    days: Type.Array(ListingStatsDay, {
      description: "One bucket per UTC day the range touches, oldest first, zeros included",
    }),
    totals: Type.Object(
      { views: Type.Integer(), impressions: Type.Integer(), inquiries: Type.Optional(Type.Integer()) },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type ListingStatsResponse = Static<typeof ListingStatsResponse>;
