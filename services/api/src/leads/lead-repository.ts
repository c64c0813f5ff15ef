// The lead row and its lead.submitted event, written in one transaction: a 202 means the lead is durable.
import { LEAD_SUBMITTED, Topics, type LeadSubmittedPayload } from "@pss/contracts";
import type { EventTrace } from "@pss/service-kit";
import type postgres from "postgres";
import { listingVisibleToBuyers } from "../buyers/buyer-visibility.ts";
import { appendEvent } from "../outbox/outbox-writer.ts";
import { retryTransaction } from "../records/transaction-retry.ts";

export interface NewLead {
  id: string;
  listingId: string;
  name: string;
  email: string;
  phone: string | null;
  message: string;
}

/** Stores the lead with the listing's broker, office and organization as they are now; null when the listing is not buyer-visible. */
export async function insertLead(sql: postgres.Sql, lead: NewLead, trace?: EventTrace): Promise<LeadSubmittedPayload | null> {
  // Retried whole after a deadlock or serialization failure (nothing of a rolled-back attempt remains).
  return retryTransaction(() => sql.begin(async (tx) => {
    const [row] = await tx<{ partner_id: string; listing_id: string; broker_id: string; office_id: number; organization_id: number; created_at: Date }[]>`
      INSERT INTO leads (id, partner_id, listing_id, broker_id, office_id, organization_id, buyer_name, buyer_email, buyer_phone, message)
      SELECT ${lead.id}, l.partner_id, l.id, l.broker_id, b.office_id, o.organization_id, ${lead.name}, ${lead.email}, ${lead.phone}, ${lead.message}
      FROM listings l JOIN brokers b ON b.id = l.broker_id JOIN offices o ON o.id = b.office_id
      WHERE l.id = ${lead.listingId} AND ${listingVisibleToBuyers(tx, "l")}
      RETURNING partner_id, listing_id::text AS listing_id, broker_id::text AS broker_id, office_id, organization_id, created_at`;
    if (!row) return null;
    const payload: LeadSubmittedPayload = {
      leadId: lead.id,
      serviceListingId: Number(row.listing_id),
      serviceBrokerId: row.broker_id,
      officeId: row.office_id,
      organizationId: row.organization_id,
      createdAt: row.created_at.toISOString(),
    };
    await appendEvent(tx, { topic: Topics.leadEvents, type: LEAD_SUBMITTED, aggregateType: "lead", aggregateId: lead.id, version: 1, partnerId: row.partner_id, payload, trace });
    return payload;
  }));
}
