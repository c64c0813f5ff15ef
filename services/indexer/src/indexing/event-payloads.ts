// The indexer's reading of listing and broker events: the catalog's reader forms (packages/contracts/src/events),
// narrowed to the fields the indexer uses. Anything that fails these checks is a poison message.
import {
  BrokerUpserted,
  BrokerUpsertedIdReader,
  decodePayload,
  ListingUpserted,
  ListingUpsertedIndexerReader,
  type AnyEventEnvelope,
} from "@pss/contracts";

export type ListingEventPayload = ListingUpsertedIndexerReader;

export const LISTING_UPSERTED = ListingUpserted.type;
export const BROKER_UPSERTED = BrokerUpserted.type;

/** null when fine, else why the event can never be indexed. */
export function listingEventProblem(event: AnyEventEnvelope): string | null {
  const decoded = decodePayload(ListingUpsertedIndexerReader, event.payload, LISTING_UPSERTED);
  if (!decoded.ok) return `listing payload is not valid: ${decoded.detail}`;
  if (String(decoded.value.listingId) !== event.aggregateId) return "payload listingId differs from aggregateId";
  return null;
}

export function brokerEventProblem(event: AnyEventEnvelope): string | null {
  const decoded = decodePayload(BrokerUpsertedIdReader, event.payload, BROKER_UPSERTED);
  if (!decoded.ok) return "broker payload has no brokerId";
  if (decoded.value.brokerId !== event.aggregateId || !/^\d{1,18}$/.test(event.aggregateId))
    return "broker aggregateId is not a broker ID";
  return null;
}
