// The event catalog (docs/events.md): every event type our services put on Kafka, its version, topic and payload.
import type { EventDefinition } from "./define-event.ts";
import { LeadSubmitted } from "./lead-events.ts";
import { PARTNER_FACTS } from "./partner-facts.ts";
import { BrokerUpserted, ListingUpserted } from "./record-events.ts";

export * from "./define-event.ts";
export * from "./event-id.ts";
export * from "./record-events.ts";
export * from "./lead-events.ts";
export * from "./partner-facts.ts";

export const EVENT_CATALOG: readonly EventDefinition[] = [
  ListingUpserted,
  BrokerUpserted,
  LeadSubmitted,
  ...Object.values(PARTNER_FACTS),
];

/** The definition of an event type, or undefined for a type the catalog does not know (a newer producer's). */
export function eventDefinition(type: string): EventDefinition | undefined {
  return EVENT_CATALOG.find((e) => e.type === type);
}
