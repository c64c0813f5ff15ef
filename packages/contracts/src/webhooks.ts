// Partner webhooks (docs/webhooks.md): the event types and their `data`, the partner endpoints' bodies and
// answers, and the facts the indexer, media and leads services publish on Topics.partnerEvents for the webhooks
// service to deliver. Signing follows the Standard Webhooks specification.
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { Clearable, DateTime, ExternalId, HttpUrl, Nullable, PageCursor, ShortText } from "./http/common.ts";
import { ListingStatusSchema } from "./http/listing.ts";
import { ReportReason, ReportStateSchema } from "./http/report.ts";

/** Event types a partner can subscribe an endpoint to. */
export const WEBHOOK_EVENT_TYPES = [
  "listing.published",
  "listing.unpublished",
  "listing.media.processed",
  "broker.avatar.processed",
  "lead.received",
  "listing.report.changed",
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
/** Sent by POST …/webhook-endpoints/{endpointId}/test whatever the endpoint subscribed to. */
export const PING_EVENT = "ping";
export type DeliveredEventType = WebhookEventType | typeof PING_EVENT;

export const WEBHOOK_DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** Most endpoints one partner may register (each event is sent to every subscribed endpoint). */
export const MAX_WEBHOOK_ENDPOINTS = 20;

/** The signing secret: `whsec_` and the base64 of 32 random bytes (Standard Webhooks). */
export const WEBHOOK_SECRET_PREFIX = "whsec_";
/** How long the secret a rotation replaced still signs (every delivery carries both signatures meanwhile). */
export const SECRET_ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

const L = Type.Literal;
const oneOf = (description: string, values: readonly string[]) => ({
  description: `${description}: one of ${values.join(", ")}`,
});

export const WebhookEventTypeSchema = Type.Union(
  [
    L("listing.published"),
    L("listing.unpublished"),
    L("listing.media.processed"),
    L("broker.avatar.processed"),
    L("lead.received"),
    L("listing.report.changed"),
  ],
  oneOf("Event type", WEBHOOK_EVENT_TYPES),
);
export const DeliveredEventTypeSchema = Type.Union(
  [
    L("listing.published"),
    L("listing.unpublished"),
    L("listing.media.processed"),
    L("broker.avatar.processed"),
    L("lead.received"),
    L("listing.report.changed"),
    L("ping"),
  ],
  oneOf("Event type", [...WEBHOOK_EVENT_TYPES, PING_EVENT]),
);
export const WebhookDeliveryStatusSchema = Type.Union(
  [L("pending"), L("delivered"), L("failed")],
  oneOf("Delivery status", WEBHOOK_DELIVERY_STATUSES),
);

// ---------------------------------------------------------------------------------------------------------------
// Event payloads: {type, timestamp, data}. `data` carries IDs, the record's version and the facts, never buyer data.
// `version` only grows per record: a receiver drops an event whose version is lower than one it already applied
// (there is no ordering promise). URLs are added by the webhooks service from PUBLIC_BASE_URL.

/** The event's number in the change feed (GET /partner/v1/events): the same number the feed gives it. */
const feedSequence = {
  sequence: Type.Optional(
    Type.Integer({
      description:
        "This event's number in the partner's change feed (GET /partner/v1/events, same partner and mode): numbers only grow, so a receiver can order events and see a gap, and catch up from the feed with after=<the last number it has>. An endpoint that carries lead data gets the numbering keys with lead tracking read, any other endpoint the numbering keys without lead tracking read",
    }),
  ),
};

const listingIds = {
  externalListingId: Type.String(),
  serviceListingId: Type.Integer(),
  serviceListingUrl: Type.String(),
};
const brokerIds = {
  externalBrokerId: Type.String(),
  serviceBrokerId: Type.String(),
  serviceProfileUrl: Type.String(),
};

/** listing.published / listing.unpublished */
export const ListingVisibilityData = Type.Object(
  {
    ...listingIds,
    ...brokerIds,
    status: ListingStatusSchema,
    version: Type.Integer({ description: "The listing's version this state belongs to" }),
    ...feedSequence,
  },
  { additionalProperties: true },
);

export const ProcessedImage = Type.Object(
  {
    url: Type.String(),
    state: Type.Union([Type.Literal("ready"), Type.Literal("failed")]),
    failureReason: Nullable(Type.String()),
    warning: Nullable(Type.String()),
    width: Nullable(Type.Integer()),
    height: Nullable(Type.Integer()),
  },
  { additionalProperties: true },
);

/** listing.media.processed: the last pending photo of the listing finished. */
export const ListingMediaProcessedData = Type.Object(
  {
    ...listingIds,
    version: Type.Integer(),
    ...feedSequence,
    ready: Type.Integer(),
    failed: Type.Integer(),
    photos: Type.Array(
      Type.Composite([Type.Object({ sortKey: Type.Integer() }, { additionalProperties: true }), ProcessedImage], {
        additionalProperties: true,
      }),
    ),
  },
  { additionalProperties: true },
);

/** broker.avatar.processed */
export const BrokerAvatarProcessedData = Type.Object(
  {
    ...brokerIds,
    version: Type.Integer(),
    ...feedSequence,
    avatar: ProcessedImage,
  },
  { additionalProperties: true },
);

/** lead.received: only IDs and the office's new lead count (spec: individual lead details never leave the service). */
export const LeadReceivedData = Type.Object(
  {
    ...listingIds,
    ...brokerIds,
    officeId: Type.Integer(),
    officeLeadCount: Type.Integer({ description: "The office's total lead count including this lead" }),
    version: Type.Integer({ description: "Equal to officeLeadCount, which only grows" }),
    ...feedSequence,
  },
  { additionalProperties: true },
);

/** listing.report.changed: the processing report's overall state changed (GET …/report has every step). */
export const ListingReportChangedData = Type.Object(
  {
    ...listingIds,
    state: ReportStateSchema,
    previousState: Nullable(ReportStateSchema),
    reasons: Type.Array(ReportReason),
    listingVersion: Type.Integer({ description: "The listing's version the state was computed for" }),
    version: Type.Integer({
      description: "The report's own version: grows by one with every state change of this listing",
    }),
  },
  { additionalProperties: true },
);

export const PingData = Type.Object(
  {
    endpointId: Type.String(),
    version: Type.Integer({ description: "The endpoint's version" }),
  },
  { additionalProperties: true },
);

/** Each delivered event type's `data` and what it means (the OpenAPI document's `webhooks`, docs/webhooks.md). */
export const WEBHOOK_EVENT_DATA: Record<DeliveredEventType, { summary: string; data: TSchema }> = {
  "listing.published": {
    summary: "The listing is visible to buyers, in search, and its serviceListingUrl answers",
    data: ListingVisibilityData,
  },
  "listing.unpublished": {
    summary: "The listing's status left the visible set (or it was removed): buyers no longer see it",
    data: ListingVisibilityData,
  },
  "listing.media.processed": {
    summary: "Every photo of the listing's current version is ready or failed, with each photo's reason",
    data: ListingMediaProcessedData,
  },
  "broker.avatar.processed": { summary: "The broker's avatar is ready or failed", data: BrokerAvatarProcessedData },
  "lead.received": {
    summary: "A buyer sent a lead on one of the partner's listings: IDs and the office's new count, no lead details",
    data: LeadReceivedData,
  },
  "listing.report.changed": {
    summary:
      "The listing's processing report changed its overall state (LIVE, LIVE_WITH_WARNINGS, PROCESSING, NOT_VISIBLE, FAILED)",
    data: ListingReportChangedData,
  },
  ping: {
    summary: "Sent by POST /partner/v1/webhook-endpoints/{endpointId}/test, whatever the endpoint subscribed to",
    data: PingData,
  },
};

/** What the receiver gets as the request body. */
export const WebhookPayload = Type.Object(
  {
    type: DeliveredEventTypeSchema,
    timestamp: DateTime,
    data: Type.Record(Type.String(), Type.Unknown(), { additionalProperties: true }),
  },
  { additionalProperties: true },
);
export type WebhookPayload = Static<typeof WebhookPayload>;

/** The exact text sent (and signed) on every attempt of a delivery: {type, timestamp, data} in this order. */
/**
 * `data` plus the URLs of the records it names (only the webhooks service and the API know PUBLIC_BASE_URL). A test
 * record (docs/sandbox.md) has no public page: its URLs are its previews, which open with the partner's test key.
 */
export function withPublicUrls(
  data: Record<string, unknown>,
  publicBaseUrl: string,
  mode: "live" | "test" = "live",
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...data };
  const base = mode === "live" ? publicBaseUrl : `${publicBaseUrl}/preview`;
  if (typeof data.serviceListingId === "number" || typeof data.serviceListingId === "string")
    out.serviceListingUrl = `${base}/listings/${data.serviceListingId}`;
  if (typeof data.serviceBrokerId === "string" || typeof data.serviceBrokerId === "number")
    out.serviceProfileUrl = `${base}/brokers/${data.serviceBrokerId}`;
  return out;
}

export function webhookBody(type: DeliveredEventType, timestamp: string, data: Record<string, unknown>): string {
  return JSON.stringify({ type, timestamp, data });
}

// ---------------------------------------------------------------------------------------------------------------
// Partner API bodies and answers.

/**
 * Body of PUT /partner/v1/webhook-endpoints/{endpointId}. `url` and `events` are required on create; an update
 * sends what changes (JSON Merge Patch, like listings). `enabled: true` re-enables an endpoint that was disabled.
 */
export const WebhookEndpointBody = Type.Object(
  {
    url: Type.Optional(HttpUrl),
    events: Type.Optional(
      Type.Array(WebhookEventTypeSchema, {
        minItems: 1,
        maxItems: WEBHOOK_EVENT_TYPES.length,
        uniqueItems: true,
        description: "Event types sent to this endpoint, each at most once",
      }),
    ),
    description: Clearable(ShortText("What this endpoint is for")),
    enabled: Type.Optional(Type.Boolean({ description: "false stops deliveries; true (re-)enables them" })),
  },
  { additionalProperties: false },
);
export type WebhookEndpointBody = Static<typeof WebhookEndpointBody>;

export const WebhookEndpointRecord = Type.Object(
  {
    endpointId: Type.String(),
    url: Type.String(),
    events: Type.Array(WebhookEventTypeSchema),
    description: Nullable(Type.String()),
    enabled: Type.Boolean(),
    disabledReason: Nullable(
      Type.String({
        description:
          "Why the endpoint is disabled (by the partner, by a 410 answer, or after failing every attempt for 5 days)",
      }),
    ),
    disabledAt: Nullable(Type.String()),
    failingSince: Nullable(Type.String({ description: "First failed attempt since the last successful delivery" })),
    previousSecretExpiresAt: Nullable(
      Type.String({
        description: "Until then deliveries carry a second signature made with the secret the last rotation replaced",
      }),
    ),
    version: Type.Integer(),
    createdAt: Type.String(),
    updatedAt: Type.String(),
  },
  { additionalProperties: true },
);
export type WebhookEndpointRecord = Static<typeof WebhookEndpointRecord>;

export const WebhookEndpointPutResponse = Type.Object(
  {
    status: Type.Literal("success"),
    message: Type.Union([Type.Literal("Webhook endpoint created"), Type.Literal("Webhook endpoint updated")]),
    endpoint: WebhookEndpointRecord,
    secret: Type.Optional(
      Type.String({
        description:
          "The signing secret (whsec_…), shown once: in the 201 that created the endpoint, and in the 200 that subscribed it to lead.received for the first time (a new secret; the previous one stops signing at once); store it now",
      }),
    ),
  },
  { additionalProperties: false },
);
export type WebhookEndpointPutResponse = Static<typeof WebhookEndpointPutResponse>;

export const WebhookEndpointResponse = Type.Object(
  { status: Type.Literal("success"), endpoint: WebhookEndpointRecord },
  { additionalProperties: true },
);
export const WebhookEndpointPage = Type.Object(
  { status: Type.Literal("success"), results: Type.Array(WebhookEndpointRecord), nextCursor: Nullable(Type.String()) },
  { additionalProperties: true },
);

export const WebhookSecretRotated = Type.Object(
  {
    status: Type.Literal("success"),
    secret: Type.String({ description: "The new signing secret (whsec_…); shown once" }),
    previousSecretExpiresAt: Type.String({
      description: "Until then deliveries are signed with the new and the previous secret",
    }),
  },
  { additionalProperties: true },
);

export const WebhookDeliveryQueued = Type.Object(
  { status: Type.Literal("success"), deliveryId: Type.String({ format: "uuid" }) },
  { additionalProperties: true },
);
export const WebhookRecoverQueued = Type.Object(
  {
    status: Type.Literal("success"),
    requeued: Type.Integer({ description: "Failed deliveries queued to be sent again (the oldest first)" }),
    notQueued: Type.Integer({
      description:
        "Failed deliveries of the range left failed because the daily re-send budget had no room for them: recover again later (a 429 says when)",
    }),
  },
  { additionalProperties: true },
);
export const WebhookEndpointDeleted = Type.Object(
  { status: Type.Literal("success"), message: Type.Literal("Webhook endpoint deleted") },
  { additionalProperties: true },
);

export const WebhookAttempt = Type.Object(
  {
    attempt: Type.Integer({
      description: "1 for the first attempt of this delivery, counting every attempt ever made",
    }),
    at: Type.String(),
    statusCode: Nullable(Type.Integer({ description: "The receiver's HTTP status; null when no answer came" })),
    latencyMs: Type.Integer(),
    error: Nullable(
      Type.String({ description: "Why the attempt failed (timeout, connection refused, HTTP 500 …); null on success" }),
    ),
  },
  { additionalProperties: true },
);

export const WebhookDeliveryRecord = Type.Object(
  {
    deliveryId: Type.String({ description: "Also the webhook-id header: identical on every attempt" }),
    endpointId: Type.String(),
    eventType: DeliveredEventTypeSchema,
    status: WebhookDeliveryStatusSchema,
    createdAt: Type.String(),
    deliveredAt: Nullable(Type.String()),
    nextAttemptAt: Nullable(Type.String({ description: "When the next attempt is due (pending deliveries)" })),
    attemptCount: Type.Integer(),
    lastStatusCode: Nullable(Type.Integer()),
    lastError: Nullable(Type.String()),
    attempts: Type.Array(WebhookAttempt, { description: "The latest attempts, newest last (at most 20)" }),
    payload: WebhookPayload,
  },
  { additionalProperties: true },
);
export type WebhookDeliveryRecord = Static<typeof WebhookDeliveryRecord>;

export const WebhookDeliveryPage = Type.Object(
  { status: Type.Literal("success"), results: Type.Array(WebhookDeliveryRecord), nextCursor: Nullable(Type.String()) },
  { additionalProperties: true },
);

const LIMIT = Type.String({
  pattern: "^0*(?:[1-9][0-9]?|[1-4][0-9]{2}|500)$",
  description: "an integer from 1 to 500 (default 100)",
});
const CURSOR = PageCursor();

export const WebhookEndpointPageQuery = Type.Object(
  { limit: Type.Optional(LIMIT), cursor: Type.Optional(CURSOR) },
  { additionalProperties: false },
);

export const WebhookDeliveryQuery = Type.Object(
  {
    endpointId: Type.Optional(ExternalId),
    status: Type.Optional(WebhookDeliveryStatusSchema),
    eventType: Type.Optional(DeliveredEventTypeSchema),
    limit: Type.Optional(LIMIT),
    cursor: Type.Optional(CURSOR),
  },
  { additionalProperties: false },
);

export const WebhookRecoverQuery = Type.Object(
  {
    since: Type.String({
      format: "date-time",
      description: "ISO 8601 date-time with a time zone: failed deliveries created at or after it are sent again",
    }),
  },
  { additionalProperties: false },
);

/** Events one replay may queue; a wider range is refused (narrow it, or replay it in parts). */
export const MAX_REPLAY_EVENTS = 10_000;

/** Body of POST …/webhook-endpoints/{endpointId}/replay: a change-feed range, a time range, or both (all bounds optional, one needed). */
export const WebhookReplayBody = Type.Object(
  {
    afterSequence: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description:
          "Events numbered after this (the change feed's sequence, GET /partner/v1/events, in the numbering this endpoint's deliveries carry in data.sequence)",
      }),
    ),
    throughSequence: Type.Optional(
      Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "… up to and including this number" }),
    ),
    since: Type.Optional(
      Type.String({ format: "date-time", description: "Events that happened at or after this instant" }),
    ),
    until: Type.Optional(Type.String({ format: "date-time", description: "… and before this instant" })),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description: "at least one of afterSequence, throughSequence, since, until",
  },
);
export type WebhookReplayBody = Static<typeof WebhookReplayBody>;
export const WebhookReplayQueued = Type.Object(
  {
    status: Type.Literal("success"),
    queued: Type.Integer({ description: "Deliveries queued: one per event of the range the endpoint subscribes to" }),
  },
  { additionalProperties: true },
);

export const WebhookErrorMessages = {
  endpointNotFound: "Webhook endpoint not found",
  deliveryNotFound: "Webhook delivery not found",
  endpointDisabled: 'Webhook endpoint is disabled; re-enable it with a PUT carrying "enabled": true first',
  tooManyEndpoints: `A partner may have at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints; delete one first`,
} as const;

// ---------------------------------------------------------------------------------------------------------------
// Facts on Topics.partnerEvents (internal): the envelope's `type` is the webhook event type, `payload` its `data`
// without the public URLs, `occurredAt` the payload's timestamp. Written to the outbox in the same transaction
// that makes the fact true, so a fact is never lost and never announced before it holds.

/** Which aggregate (and so which Kafka key) each fact belongs to. */
export const PARTNER_EVENT_AGGREGATES: Record<WebhookEventType, "listing" | "broker" | "lead"> = {
  "listing.published": "listing",
  "listing.unpublished": "listing",
  "listing.media.processed": "listing",
  "broker.avatar.processed": "broker",
  "lead.received": "lead",
  "listing.report.changed": "listing",
};

export function isWebhookEventType(type: string): type is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(type);
}
