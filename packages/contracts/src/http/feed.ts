// The change feed (GET /partner/v1/events): every change to a key's records, in commit order, numbered by a
// per-partner (and per-mode) sequence that never goes backwards and never skips a committed change. Two audiences,
// each numbered on its own without holes: keys with lead tracking read every event; keys without it read the
// events without lead data (FEED_LEAD_EVENT_TYPES), so their numbering cannot count leads.
import { Type, type Static } from "@sinclair/typebox";
import { Nullable } from "./common.ts";

/** Events are kept at least this long after they were sequenced (FEED_RETENTION_DAYS may only raise it). */
export const FEED_RETENTION_DAYS = 35;
export const FEED_MAX_LIMIT = 1000;

export const FEED_EVENT_TYPES = [
  "listing.created",
  "listing.updated",
  "listing.status_changed",
  "listing.published",
  "listing.unpublished",
  "listing.media.processed",
  "listing.report.changed",
  "broker.created",
  "broker.updated",
  "broker.avatar.processed",
  "lead.received",
] as const;
export type FeedEventType = (typeof FEED_EVENT_TYPES)[number];

/**
 * The events every record write makes (docs/partner-api.md "Change feed"), by far the most of the feed; every other
 * type is a fact a service reports (published, media processed, a lead: the webhooks' events). The feed's lookups
 * by event ID and by time serve only facts, so their indexes leave these out (migration 0049).
 */
export const FEED_RECORD_CHANGE_TYPES: readonly string[] = [
  "listing.created",
  "listing.updated",
  "listing.status_changed",
  "broker.created",
  "broker.updated",
] satisfies FeedEventType[];

/** Events only keys with lead tracking read (and number): the records audience's numbering leaves them out. */
export const FEED_LEAD_EVENT_TYPES: readonly string[] = ["lead.received"] satisfies FeedEventType[];
export const isLeadFeedEvent = (type: string): boolean => FEED_LEAD_EVENT_TYPES.includes(type);

export const FeedQuery = Type.Object(
  {
    after: Type.Optional(
      Type.String({
        pattern: "^(0|[1-9][0-9]{0,17})$",
        description:
          "The sequence number of the last event already read (nextCursor of the previous page); 0 or absent: from the oldest event kept",
      }),
    ),
    limit: Type.Optional(
      Type.String({
        pattern: "^0*(?:[1-9][0-9]{0,2}|1000)$",
        description: `Events per page, 1-${FEED_MAX_LIMIT} (default 100)`,
      }),
    ),
  },
  { additionalProperties: false },
);

export const FeedEvent = Type.Object(
  {
    sequence: Type.Integer({
      description:
        "This event's number in the key's partner-and-mode sequence (with lead tracking: every event; without: the events without lead data, numbered on their own): consecutive, never reused",
    }),
    type: Type.String({ description: `One of ${FEED_EVENT_TYPES.join(", ")}` }),
    occurredAt: Type.String({ description: "When the change was written (ISO 8601, UTC)" }),
    recordType: Type.String({ description: "listing or broker (lead.received: listing)" }),
    version: Nullable(
      Type.Integer({
        description: "The record's version this event belongs to (lead.received: the office's lead count)",
      }),
    ),
    data: Type.Record(Type.String(), Type.Unknown(), {
      additionalProperties: true,
      description:
        "IDs and the change: listing.created/updated and broker.created/updated carry changedPaths; listing.status_changed from and to; the processed, published and lead events the same data as their webhooks",
    }),
  },
  { additionalProperties: true },
);
export type FeedEvent = Static<typeof FeedEvent>;

export const FeedPage = Type.Object(
  {
    status: Type.Literal("success"),
    results: Type.Array(FeedEvent),
    nextCursor: Type.String({
      description: "Pass as after= to read on; the same cursor again when nothing new has been sequenced yet (poll it)",
    }),
  },
  { additionalProperties: false },
);
export type FeedPage = Static<typeof FeedPage>;
