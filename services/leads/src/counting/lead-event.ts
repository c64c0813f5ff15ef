// lead.submitted events as the leads service reads them (the catalog's reader form, packages/contracts/src/events):
// anything malformed is a permanent failure.
import {
  decodePayload,
  LEAD_SUBMITTED,
  LeadSubmitted,
  type AnyEventEnvelope,
  type LeadSubmittedPayload,
} from "@pss/contracts";

export type ParsedLeadEvent =
  | { ok: true; lead: LeadSubmittedPayload }
  | { ok: false; reason: string }
  | { ok: "ignore" };

export function parseLeadEvent(event: AnyEventEnvelope): ParsedLeadEvent {
  // Other event types may share the topic later; they are not ours to fail.
  if (event.type !== LEAD_SUBMITTED) return { ok: "ignore" };
  const decoded = decodePayload(LeadSubmitted.reader, event.payload, LEAD_SUBMITTED);
  if (!decoded.ok) return { ok: false, reason: decoded.reason };
  if (decoded.value.leadId !== event.aggregateId)
    return { ok: false, reason: "lead.submitted payload leadId differs from aggregateId" };
  return { ok: true, lead: decoded.value };
}
