// Facts partners are told about by webhook (Topics.partnerEvents, key "<aggregate type>:<ID>"): the envelope's
// `type` is the webhook event type, `payload` the webhook's `data` without the public URLs (the webhooks service
// adds them, and the change-feed number, contracts/src/webhooks.ts). Written to the outbox in the transaction that
// makes the fact true.
import { Type, type Static } from "@sinclair/typebox";
import { Topics } from "../topics.ts";
import { ListingStatusSchema } from "../http/listing.ts";
import { ReportReason, ReportStateSchema } from "../http/report.ts";
import { PARTNER_EVENT_AGGREGATES, type WebhookEventType } from "../webhooks.ts";
import { defineEvent, type EventDefinition } from "./define-event.ts";

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const closed = { additionalProperties: false } as const;

const listingIds = { externalListingId: Type.String(), serviceListingId: Type.Integer() };
const brokerIds = { externalBrokerId: Type.String(), serviceBrokerId: Type.String() };

const fact = <T extends WebhookEventType, P extends Parameters<typeof defineEvent>[0]["payload"]>(
  type: T,
  payload: P,
) =>
  defineEvent({
    type,
    version: 1,
    topic: Topics.partnerEvents,
    aggregateType: PARTNER_EVENT_AGGREGATES[type],
    payload,
  });

export const ListingVisibilityFactPayload = Type.Object(
  { ...listingIds, ...brokerIds, status: ListingStatusSchema, version: Type.Integer() },
  closed,
);
export type ListingVisibilityFactPayload = Static<typeof ListingVisibilityFactPayload>;
export const ListingPublished = fact("listing.published", ListingVisibilityFactPayload);
export const ListingUnpublished = fact("listing.unpublished", ListingVisibilityFactPayload);

const ProcessedImageFact = {
  url: Type.String(),
  state: Type.Union([Type.Literal("ready"), Type.Literal("failed")]),
  failureReason: Nullable(Type.String()),
  warning: Nullable(Type.String()),
  width: Nullable(Type.Integer()),
  height: Nullable(Type.Integer()),
};

export const ListingMediaProcessedFactPayload = Type.Object(
  {
    ...listingIds,
    version: Type.Integer(),
    ready: Type.Integer(),
    failed: Type.Integer(),
    photos: Type.Array(Type.Object({ ...ProcessedImageFact, sortKey: Type.Integer() }, closed)),
  },
  closed,
);
export type ListingMediaProcessedFactPayload = Static<typeof ListingMediaProcessedFactPayload>;
export const ListingMediaProcessed = fact("listing.media.processed", ListingMediaProcessedFactPayload);

export const BrokerAvatarProcessedFactPayload = Type.Object(
  { ...brokerIds, version: Type.Integer(), avatar: Type.Object(ProcessedImageFact, closed) },
  closed,
);
export type BrokerAvatarProcessedFactPayload = Static<typeof BrokerAvatarProcessedFactPayload>;
export const BrokerAvatarProcessed = fact("broker.avatar.processed", BrokerAvatarProcessedFactPayload);

export const LeadReceivedFactPayload = Type.Object(
  {
    ...listingIds,
    ...brokerIds,
    officeId: Type.Integer(),
    officeLeadCount: Type.Integer(),
    version: Type.Integer({ description: "Equal to officeLeadCount, which only grows" }),
  },
  closed,
);
export type LeadReceivedFactPayload = Static<typeof LeadReceivedFactPayload>;
export const LeadReceived = fact("lead.received", LeadReceivedFactPayload);

export const ListingReportChangedFactPayload = Type.Object(
  {
    ...listingIds,
    state: ReportStateSchema,
    previousState: Nullable(ReportStateSchema),
    reasons: Type.Array(ReportReason),
    listingVersion: Type.Integer(),
    version: Type.Integer({ description: "The report's own version" }),
  },
  closed,
);
export type ListingReportChangedFactPayload = Static<typeof ListingReportChangedFactPayload>;
export const ListingReportChanged = fact("listing.report.changed", ListingReportChangedFactPayload);

export const PARTNER_FACTS: Record<WebhookEventType, EventDefinition> = {
  "listing.published": ListingPublished,
  "listing.unpublished": ListingUnpublished,
  "listing.media.processed": ListingMediaProcessed,
  "broker.avatar.processed": BrokerAvatarProcessed,
  "lead.received": LeadReceived,
  "listing.report.changed": ListingReportChanged,
};

/**
 * The Kafka key of a fact: `<aggregate type>:<aggregate ID>` (one partition, so one order, for all facts of a
 * record), not the bare ID the aggregate's own event topic uses.
 */
export function partnerFactKey(type: WebhookEventType, aggregateId: string): string {
  return `${PARTNER_EVENT_AGGREGATES[type]}:${aggregateId}`;
}

// Builders: the payload of each fact from the rows it is about (what the writers' RETURNING gives).
type ListingRow = { id: string | number; external_id: string };
type BrokerRow = { id: string | number; external_id: string };

export function listingVisibilityFact(
  l: ListingRow & { status: ListingVisibilityFactPayload["status"]; version: number },
  b: BrokerRow,
): ListingVisibilityFactPayload {
  return {
    externalListingId: l.external_id,
    serviceListingId: Number(l.id),
    externalBrokerId: b.external_id,
    serviceBrokerId: String(b.id),
    status: l.status,
    version: l.version,
  };
}

export function leadReceivedFact(
  l: ListingRow,
  b: BrokerRow,
  office: { officeId: number; officeLeadCount: number },
): LeadReceivedFactPayload {
  return {
    externalListingId: l.external_id,
    serviceListingId: Number(l.id),
    externalBrokerId: b.external_id,
    serviceBrokerId: String(b.id),
    officeId: office.officeId,
    officeLeadCount: office.officeLeadCount,
    version: office.officeLeadCount,
  };
}

type ImageRow = {
  url: string;
  state: "ready" | "failed";
  failure_reason: string | null;
  warning: string | null;
  width: number | null;
  height: number | null;
};
const image = (p: ImageRow) => ({
  url: p.url,
  state: p.state,
  failureReason: p.failure_reason,
  warning: p.warning,
  width: p.width,
  height: p.height,
});

/** `photos` in the listing's order (sort key, then ID). */
export function listingMediaProcessedFact(
  l: ListingRow & { version: number },
  photos: (ImageRow & { sort_key: number })[],
): ListingMediaProcessedFactPayload {
  return {
    externalListingId: l.external_id,
    serviceListingId: Number(l.id),
    version: l.version,
    ready: photos.filter((p) => p.state === "ready").length,
    failed: photos.filter((p) => p.state === "failed").length,
    photos: photos.map((p) => ({ ...image(p), sortKey: p.sort_key })),
  };
}

export function brokerAvatarProcessedFact(
  b: BrokerRow & { version: number },
  avatar: ImageRow,
): BrokerAvatarProcessedFactPayload {
  return { externalBrokerId: b.external_id, serviceBrokerId: String(b.id), version: b.version, avatar: image(avatar) };
}

export function listingReportChangedFact(
  a: Omit<ListingReportChangedFactPayload, "version">,
  reportVersion: number,
): ListingReportChangedFactPayload {
  return { ...a, version: reportVersion };
}
