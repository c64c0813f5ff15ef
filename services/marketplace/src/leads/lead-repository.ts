// The lead row and its lead.submitted event, written in one transaction: a 202 means the lead is durable.
import type { LeadSubmittedPayload } from "@pss/contracts";
import { announceLeadSubmitted, type EventTrace, type StoredLeadRow } from "@pss/service-kit";
import { retryTransaction } from "@pss/http-kit";
import type postgres from "postgres";
import { listingVisibleToBuyers } from "../buyers/buyer-visibility.ts";

export interface NewLead {
  id: string;
  listingId: string;
  name: string;
  email: string;
  phone: string | null;
  message: string;
}

/** Stores the lead with the listing's broker, office and organization as they are now; null when buyers cannot see the listing. */
export async function insertLead(
  sql: postgres.Sql,
  lead: NewLead,
  trace?: EventTrace,
): Promise<LeadSubmittedPayload | null> {
  // Retried whole after a deadlock or serialization failure (nothing of a rolled-back attempt remains).
  return retryTransaction(() =>
    sql.begin(async (tx) => {
      // A test listing is never visible to buyers, so no buyer's lead can reach it (or its broker's inbox).
      const [row] = await tx<StoredLeadRow[]>`
      INSERT INTO leads (id, partner_id, listing_id, broker_id, office_id, organization_id, buyer_name, buyer_email, buyer_phone, message)
      SELECT ${lead.id}, l.partner_id, l.id, l.broker_id, b.office_id, o.organization_id, ${lead.name}, ${lead.email}, ${lead.phone}, ${lead.message}
      FROM listings l JOIN brokers b ON b.id = l.broker_id JOIN offices o ON o.id = b.office_id
      WHERE l.id = ${lead.listingId} AND ${listingVisibleToBuyers(tx, "l")}
      RETURNING partner_id, listing_id::text AS listing_id, broker_id::text AS broker_id, office_id, organization_id, created_at`;
      if (!row) return null;
      return announceLeadSubmitted(tx, lead.id, row, "live", trace);
    }),
  );
}
