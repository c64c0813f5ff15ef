// GET /partner/v1/events: the change feed of the key's records (its partner and mode), in sequence order.
import { Elysia } from "elysia";
import { FEED_RETENTION_DAYS, FeedPage, FeedQuery } from "@pss/contracts";
import { isoTimestamp } from "@pss/database/queries";
import { documented } from "../docs/openapi.ts";
import { ApiError } from "../http/errors.ts";
import type { PartnerContext } from "../partner/partner-context.ts";
import { FEED_DOCS } from "./feed-docs.ts";

/** The cursor points before events the retention removed: the reader must reconcile, then follow from the head. */
export class FeedGoneError extends ApiError {
  constructor(prunedThrough: number) {
    super(
      410,
      `Events up to sequence ${prunedThrough} are no longer kept (kept at least ${FEED_RETENTION_DAYS} days): read the records with GET /partner/v1/listings and /partner/v1/brokers, then follow the feed from after=${prunedThrough}`,
    );
  }
}

export function createFeedRoutes(ctx: PartnerContext) {
  const { sql } = ctx.deps;
  return new Elysia({ name: "feed-routes" }).use(ctx.auth).get(
    "/events",
    async ({ query, set, partner }) => {
      const after = Number(query.after ?? "0");
      const limit = Number(query.limit ?? "100");
      const [head] =
        await sql`SELECT pruned_through FROM partner_feed_heads WHERE partner_id = ${partner.partnerId}::uuid AND mode = ${partner.mode}`;
      const prunedThrough = Number(head?.pruned_through ?? 0);
      if (query.after !== undefined && after < prunedThrough) throw new FeedGoneError(prunedThrough);
      // Each event's JSON is built by PostgreSQL and passed through as text: a page of 500 is never parsed into
      // objects only to be serialised again (the feed's read target is a p99 for pages of 500).
      const rows = await sql`
        SELECT seq, json_build_object('sequence', seq, 'type', type,
          'occurredAt', ${isoTimestamp(sql, "occurred_at")},
          'recordType', record_type, 'version', version, 'data', data)::text AS event
        FROM partner_feed
        WHERE partner_id = ${partner.partnerId}::uuid AND mode = ${partner.mode} AND seq > ${after}
          ${partner.leadTracking ? sql`` : sql`AND type <> 'lead.received'`}
        ORDER BY seq LIMIT ${limit}`;
      const nextCursor = String(rows.length ? rows.at(-1)!.seq : Math.max(after, 0));
      set.headers["content-type"] = "application/json";
      return `{"status":"success","results":[${rows.map((r) => r.event as string).join(",")}],"nextCursor":"${nextCursor}"}`;
    },
    {
      query: FeedQuery,
      detail: {
        summary: "The change feed: every change to this key's records, in commit order, numbered without gaps",
        description: FEED_DOCS["GET /events"],
        responses: documented({
          200: {
            description: "One page; nextCursor is the last sequence number read (unchanged when nothing new)",
            schema: FeedPage,
          },
          410: "The cursor is older than the retention: reconcile, then follow from the sequence named",
        }),
      },
    },
  );
}
