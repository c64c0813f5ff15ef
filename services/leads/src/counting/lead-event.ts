// lead.submitted events as the leads service reads them: anything malformed is a permanent failure.
import { Value } from "@sinclair/typebox/value";
import { LEAD_SUBMITTED, LeadSubmittedPayload, registerFormats, type AnyEventEnvelope } from "@pss/contracts";

export type ParsedLeadEvent = { ok: true; lead: LeadSubmittedPayload } | { ok: false; reason: string } | { ok: "ignore" };

export function parseLeadEvent(event: AnyEventEnvelope): ParsedLeadEvent {
  // Other event types may share the topic later; they are not ours to fail.
  if (event.type !== LEAD_SUBMITTED) return { ok: "ignore" };
  registerFormats();
  if (!Value.Check(LeadSubmittedPayload, event.payload)) {
    const first = [...Value.Errors(LeadSubmittedPayload, event.payload)][0];
    return { ok: false, reason: `invalid lead.submitted payload: ${first ? `${first.path || "/"} ${first.message}` : "invalid"}` };
  }
  if (event.payload.leadId !== event.aggregateId) return { ok: false, reason: "lead.submitted payload leadId differs from aggregateId" };
  return { ok: true, lead: event.payload };
}
