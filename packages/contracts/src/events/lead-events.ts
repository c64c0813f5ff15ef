// lead.submitted (Topics.leadEvents, key: the lead's ID): a buyer's lead as stored, written by the API in the
// transaction that stores it; read by the leads service (counting, e-mail). Where the lead belonged when it was
// submitted; no contact details or message: consumers that need them read the leads table.
import { Type, type Static } from "@sinclair/typebox";
import { Topics } from "../topics.ts";
import { defineEvent } from "./define-event.ts";

export const LEAD_SUBMITTED = "lead.submitted";

export const LeadSubmittedProducerPayload = Type.Object(
  {
    leadId: Type.String({ format: "uuid" }),
    serviceListingId: Type.Integer(),
    serviceBrokerId: Type.String(),
    officeId: Type.Integer(),
    organizationId: Type.Integer(),
    createdAt: Type.String({ format: "date-time" }),
  },
  { additionalProperties: false },
);

export const LeadSubmitted = defineEvent({
  type: LEAD_SUBMITTED,
  version: 1,
  topic: Topics.leadEvents,
  aggregateType: "lead",
  payload: LeadSubmittedProducerPayload,
});

/** The reader form of lead.submitted's payload (a tolerant reader: fields a newer producer adds are ignored). */
export const LeadSubmittedPayload = LeadSubmitted.reader as typeof LeadSubmittedProducerPayload;
export type LeadSubmittedPayload = Static<typeof LeadSubmittedProducerPayload>;

export function leadSubmittedPayload(a: {
  leadId: string;
  listingId: string | number;
  brokerId: string;
  officeId: number;
  organizationId: number;
  createdAt: Date;
}): LeadSubmittedPayload {
  return {
    leadId: a.leadId,
    serviceListingId: Number(a.listingId),
    serviceBrokerId: a.brokerId,
    officeId: a.officeId,
    organizationId: a.organizationId,
    createdAt: a.createdAt.toISOString(),
  };
}
