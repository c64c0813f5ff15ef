// GET /partner/v1/listings/{externalListingId}/stats (issue 24, part 3): daily buckets of a listing's buyer
// statistics. Read-only, scoped to the key's partner and mode; startDate/endDate as the lead-count routes read
// them (the same 400 messages). Inquiries (counts only) only for keys with lead tracking.
import { Elysia } from "elysia";
import { ErrorMessages, ErrorResponse, LeadCountQuery, ListingStatsResponse } from "@pss/contracts";
import { documented, withExamples } from "../docs/openapi.ts";
import { NotFoundError } from "../http/errors.ts";
import type { PartnerContext } from "../partner/partner-context.ts";
import type { Principal } from "../auth/authenticator.ts";
import { parseDateRange } from "../lead-counts/date-range.ts";
import { findListing } from "../listings/listing-repository.ts";
import { readDailyStats } from "./stats-repository.ts";
import { utcDay } from "./visitors.ts";
import { STATS_DOCS, STATS_EXAMPLES } from "./stats-docs.ts";

const DAY_MS = 24 * 3600 * 1000;

/** The UTC days from `first` to `last`, inclusive. */
function daysBetween(first: string, last: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${first}T00:00:00Z`); t <= Date.parse(`${last}T00:00:00Z`); t += DAY_MS)
    out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

export function createStatsRoutes(ctx: PartnerContext) {
  const { sql } = ctx.deps;
  // Before schema validation, as on the lead-count routes: every query problem gets the same message.
  const check = ({ partner, query }: { partner: Principal; query: Record<string, unknown> }) => ({
    partner,
    range: parseDateRange(query),
  });
  return new Elysia({ name: "stats-routes" }).use(ctx.auth).get(
    "/listings/:externalListingId/stats",
    async (c) => {
      const { partner, range } = check(c);
      const listing = await findListing(sql, partner, ctx.externalId(c.params.externalListingId, "externalListingId"));
      if (!listing) throw new NotFoundError(ErrorMessages.listingNotFound);
      // Buckets are whole UTC days: those the range touches, within the listing's life (nothing exists outside it).
      const now = new Date();
      const startAt = range.start && range.start > listing.createdAt ? range.start : listing.createdAt;
      const endAt = range.end && range.end < now ? new Date(range.end.getTime() - 1) : now;
      const first = utcDay(startAt);
      const last = utcDay(endAt);
      const days = last < first ? [] : daysBetween(first, last);
      const inquiries = partner.leadTracking;
      const stored = days.length
        ? await readDailyStats(sql, { listingId: listing.id, mode: listing.mode, first, last, inquiries })
        : new Map();
      const totals = { views: 0, impressions: 0, inquiries: 0 };
      const buckets = days.map((date) => {
        const d = stored.get(date) ?? { views: 0, impressions: 0, inquiries: 0 };
        totals.views += d.views;
        totals.impressions += d.impressions;
        totals.inquiries += d.inquiries;
        return inquiries
          ? { date, views: d.views, impressions: d.impressions, inquiries: d.inquiries }
          : { date, views: d.views, impressions: d.impressions };
      });
      return {
        status: "success" as const,
        externalListingId: listing.externalId,
        serviceListingId: listing.id,
        startDate: first,
        endDate: days.length ? last : first,
        days: buckets,
        totals: inquiries ? totals : { views: totals.views, impressions: totals.impressions },
      };
    },
    {
      transform: (c) => void check(c),
      query: LeadCountQuery,
      response: { 200: ListingStatsResponse, 400: ErrorResponse, 401: ErrorResponse, 404: ErrorResponse },
      detail: {
        summary:
          "A listing's buyer statistics per UTC day: page views, search impressions and, with lead tracking, inquiries",
        description: STATS_DOCS["GET /listings/:externalListingId/stats"],
        ...withExamples(STATS_EXAMPLES["GET /listings/:externalListingId/stats"]),

        responses: documented({
          400: 'startDate after endDate is refused with details [{path: "startDate", …}].',
          404: ErrorMessages.listingNotFound,
        }),
      },
    },
  );
}
