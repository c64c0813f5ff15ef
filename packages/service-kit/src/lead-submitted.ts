// The lead.submitted event of a new lead row, in the transaction that stores it: a buyer's inquiry (the
// marketplace's intake) and a test key's simulated lead (the API's test mode) are announced the same way.
import { LeadSubmitted, leadSubmittedPayload, type LeadSubmittedPayload, type RecordMode } from "@pss/contracts";
import type postgres from "postgres";
import { appendEvent } from "./outbox-writer.ts";
import type { EventTrace } from "./trace.ts";

/** What an INSERT INTO leads … RETURNING gives back for the event. */
export interface StoredLeadRow {
  partner_id: string;
  listing_id: string;
  broker_id: string;
  office_id: number;
  organization_id: number;
  created_at: Date;
}

export async function announceLeadSubmitted(
  tx: postgres.TransactionSql,
  leadId: string,
  row: StoredLeadRow,
  mode: RecordMode,
  trace?: EventTrace,
): Promise<LeadSubmittedPayload> {
  const payload = leadSubmittedPayload({
    leadId,
    listingId: row.listing_id,
    brokerId: row.broker_id,
    officeId: row.office_id,
    organizationId: row.organization_id,
    createdAt: row.created_at,
  });
  await appendEvent(
    tx,
    LeadSubmitted,
    { aggregateId: leadId, version: 1, partnerId: row.partner_id, mode },
    payload,
    trace,
  );
  return payload;
}
