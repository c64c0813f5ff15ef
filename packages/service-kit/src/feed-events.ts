// Which feed events one outbox row makes (pure): its writer stores them as drafts (feed-drafts.ts) and the sequencer
// numbers them. A record write makes "<record>.created" (version 1) or "<record>.updated" with the changed field
// paths of its change-history row, and a listing whose status moved also "listing.status_changed"; a fact
// (published, unpublished, photos or avatar processed, lead received) makes one event of its type carrying the
// fact's data, as its webhook does. Rows of other kinds (lead.submitted, a future type) make none. Record events are read with the catalog's reader forms
// (packages/contracts/src/events): a row whose payload cannot be read makes none either (our producers build
// every row from the producer form, so only a hand-written row can be one).
import {
  BrokerUpserted,
  BrokerUpsertedFeedReader,
  decodePayload,
  isWebhookEventType,
  ListingUpserted,
  ListingUpsertedFeedReader,
  type FeedEventType,
  type UntypedJson,
} from "@pss/contracts";

export interface OutboxRowForFeed {
  /** The envelope as built by its writer (or, for a previous release's row, as stored). */
  payload: {
    eventId: string;
    type: string;
    aggregateType?: string;
    aggregateId: string;
    version?: number;
    partnerId: string;
    mode?: string;
    occurredAt: string;
    payload?: UntypedJson;
  };
  /** The change-history row of the version written (listing or broker), when there is one. */
  changes: { path: string }[] | null;
  statusFrom: string | null;
  statusTo: string | null;
}

export interface FeedEventDraft {
  partnerId: string;
  mode: string;
  eventId: string;
  type: FeedEventType;
  recordType: "listing" | "broker";
  version: number | null;
  data: Record<string, unknown>;
  occurredAt: string;
}

export function feedEventsOf(row: OutboxRowForFeed): FeedEventDraft[] {
  const e = row.payload;
  const base = {
    partnerId: e.partnerId,
    mode: e.mode ?? "live",
    eventId: e.eventId,
    occurredAt: e.occurredAt,
    version: typeof e.version === "number" ? e.version : null,
  };
  const changedPaths = (row.changes ?? []).map((c) => c.path);
  if (e.type === ListingUpserted.type) {
    const decoded = decodePayload(ListingUpsertedFeedReader, e.payload, e.type);
    if (!decoded.ok) return [];
    const p = decoded.value;
    const ids = {
      externalListingId: p.externalId,
      serviceListingId: Number(e.aggregateId),
      serviceBrokerId: p.brokerId,
    };
    const created = e.version === 1;
    const out: FeedEventDraft[] = [
      {
        ...base,
        type: created ? "listing.created" : "listing.updated",
        recordType: "listing",
        data: { ...ids, status: p.status, changedPaths },
      },
    ];
    if (!created && row.statusFrom !== null && row.statusTo !== null && row.statusFrom !== row.statusTo) {
      out.push({
        ...base,
        type: "listing.status_changed",
        recordType: "listing",
        data: { ...ids, from: row.statusFrom, to: row.statusTo },
      });
    }
    return out;
  }
  if (e.type === BrokerUpserted.type) {
    const decoded = decodePayload(BrokerUpsertedFeedReader, e.payload, e.type);
    if (!decoded.ok) return [];
    const p = decoded.value;
    return [
      {
        ...base,
        type: e.version === 1 ? "broker.created" : "broker.updated",
        recordType: "broker",
        data: { externalBrokerId: p.externalId, serviceBrokerId: e.aggregateId, changedPaths },
      },
    ];
  }
  if (isWebhookEventType(e.type)) {
    const recordType = e.type === "broker.avatar.processed" ? "broker" : "listing";
    // A fact's data is passed on as it came, like its webhook (the webhooks service reads it with the catalog's reader).
    return [{ ...base, type: e.type, recordType, data: { ...(e.payload ?? {}) } }];
  }
  return [];
}
