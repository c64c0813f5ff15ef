import { expect, test } from "bun:test";
import { buildEnvelope, LeadSubmitted, leadSubmittedPayload, type AnyEventEnvelope } from "@pss/contracts";
import { parseLeadEvent } from "./lead-event.ts";

const leadId = crypto.randomUUID();
const payload = {
  leadId,
  serviceListingId: 1,
  serviceBrokerId: "2",
  officeId: 3,
  organizationId: 4,
  createdAt: "2026-05-01T12:00:00.000Z",
};
const event = (p: unknown): AnyEventEnvelope => ({
  eventId: crypto.randomUUID(),
  type: "lead.submitted",
  aggregateType: "lead",
  aggregateId: leadId,
  version: 1,
  partnerId: "p",
  occurredAt: "2026-05-01T12:00:00.000Z",
  payload: p,
});

test("a lead.submitted payload with fields a newer API added is counted like any other", () => {
  expect(parseLeadEvent(event({ ...payload, channel: "mobile-app", attribution: { campaign: "spring" } }))).toEqual({
    ok: true,
    lead: { ...payload, channel: "mobile-app", attribution: { campaign: "spring" } } as never,
  });
});

test("a lead.submitted payload without a field the counter uses is refused", () => {
  const { officeId: _, ...withoutOffice } = payload;
  expect(parseLeadEvent(event(withoutOffice))).toMatchObject({
    ok: false,
    reason: expect.stringContaining("officeId"),
  });
});

test("what the API writes (the catalog's builder, in its envelope) is read as it was written", () => {
  const written = leadSubmittedPayload({
    leadId,
    listingId: "12",
    brokerId: "5",
    officeId: 3,
    organizationId: 4,
    createdAt: new Date("2026-05-01T12:00:00.123Z"),
  });
  const received = JSON.parse(
    JSON.stringify(
      buildEnvelope(LeadSubmitted, { aggregateId: leadId, version: 1, partnerId: "p", mode: "live" }, written),
    ),
  );
  expect(parseLeadEvent(received)).toEqual({ ok: true, lead: written });
});
