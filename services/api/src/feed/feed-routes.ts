// GET /partner/v1/events: the change feed of the key's records (its partner and mode), in sequence order.
import { Elysia } from "elysia";
import { FEED_RETENTION_DAYS, FeedPage, FeedQuery } from "@pss/contracts";
import { isoTimestamp } from "@pss/database/queries";
import { documented, withExamples } from "../docs/openapi.ts";
import { ApiError } from "../http/errors.ts";
import type { PartnerContext } from "../partner/partner-context.ts";
import { FEED_DOCS, FEED_EXAMPLES } from "./feed-docs.ts";

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
      // The key's audience (docs/partner-api.md "Change feed"): with lead tracking every event by `seq`; without
      // it the events without lead data by their own numbering, `record_seq` (lead events have none), so its
      // numbers have no hole where a lead was.
      const [n, prunedCol] = partner.leadTracking
        ? [sql`f.seq`, sql`h.pruned_through`]
        : [sql`f.record_seq`, sql`h.record_pruned_through`];
      // pruned_through and the page in ONE statement, so one snapshot: retention deletes events and raises
      // pruned_through in one transaction, so a page can never start after events removed since pruned_through
      // was read (that would be a 200 that skipped them, instead of the 410). Each event's JSON is built by
      // PostgreSQL and passed through as text: a page of 500 is never parsed into objects only to be serialised
      // again (the feed's read target is a p99 for pages of 500).
      const rows = await sql`
        SELECT coalesce((SELECT ${prunedCol} FROM partner_feed_heads h WHERE h.partner_id = ${partner.partnerId}::uuid AND h.mode = ${partner.mode}), 0) AS pruned_through,
          p.n, p.event
        FROM (SELECT 1) one LEFT JOIN LATERAL (
          SELECT ${n} AS n, json_build_object('sequence', ${n}, 'type', f.type,
            'occurredAt', ${isoTimestamp(sql, "f.occurred_at")},
            'recordType', f.record_type, 'version', f.version, 'data', f.data)::text AS event
          FROM partner_feed f
          WHERE f.partner_id = ${partner.partnerId}::uuid AND f.mode = ${partner.mode} AND ${n} > ${after}
          ORDER BY ${n} LIMIT ${limit}
        ) p ON true
        ORDER BY p.n`;
      const prunedThrough = Number(rows[0]!.pruned_through);
      if (query.after !== undefined && after < prunedThrough) throw new FeedGoneError(prunedThrough);
      const page = rows.filter((r) => r.n !== null);
      const nextCursor = String(page.length ? page.at(-1)!.n : Math.max(after, 0));
      set.headers["content-type"] = "application/json";
      return `{"status":"success","results":[${page.map((r) => r.event as string).join(",")}],"nextCursor":"${nextCursor}"}`;
    },
    {
      query: FeedQuery,
      detail: {
        summary: "The change feed: every change to this key's records, in commit order, numbered without gaps",
        description: FEED_DOCS["GET /events"],
        ...withExamples(FEED_EXAMPLES["GET /events"]),
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
