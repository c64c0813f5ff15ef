// A simulated lead on a test listing (POST /partner/v1/test/listings/{externalListingId}/leads): the lead row, its
// lead.submitted event and the test key's lead.received fact, written in one transaction.
import { isBuyerVisible, type LeadSubmittedPayload } from "@pss/contracts";
import { announceLeadSubmitted, type EventTrace, type StoredLeadRow } from "@pss/service-kit";
import { retryTransaction } from "@pss/http-kit";
import type postgres from "postgres";
import type { RecordScope } from "../records/record-scope.ts";
import { announceTestLeadReceived } from "./test-lead-received.ts";

export interface SimulatedLead {
  id: string;
  name: string;
  email: string;
  phone: string | null;
  message: string;
  submittedAt: Date | null;
}

export type SimulatedLeadOutcome =
  | { kind: "accepted"; lead: LeadSubmittedPayload }
  | { kind: "notFound" }
  | { kind: "notVisible"; status: string };

/**
 * A simulated lead on a test listing (test mode only): stored as a lead of mode 'test' in the final delivery state
 * 'skipped' (never e-mailed; the database refuses a test lead in any other state) and announced like a real one.
 * Like a buyer's, it can only arrive while the listing's status is one buyers would see.
 */
export async function insertSimulatedLead(
  sql: postgres.Sql,
  scope: RecordScope,
  externalListingId: string,
  lead: SimulatedLead,
  trace?: EventTrace,
): Promise<SimulatedLeadOutcome> {
  return retryTransaction(() =>
    sql.begin(async (tx): Promise<SimulatedLeadOutcome> => {
      const [listing] = await tx<{ id: string; status: string }[]>`
      SELECT id::text AS id, status FROM listings WHERE partner_id = ${scope.partnerId} AND mode = ${scope.mode} AND external_id = ${externalListingId}`;
      if (!listing) return { kind: "notFound" };
      // The status half of the buyers' rule: were the listing live, could a buyer send this lead now?
      if (!isBuyerVisible(listing.status)) return { kind: "notVisible", status: listing.status };
      const [row] = await tx<StoredLeadRow[]>`
      INSERT INTO leads (id, partner_id, mode, listing_id, broker_id, office_id, organization_id, buyer_name, buyer_email, buyer_phone, message, created_at, delivery_state)
      SELECT ${lead.id}, l.partner_id, l.mode, l.id, l.broker_id, b.office_id, o.organization_id, ${lead.name}, ${lead.email}, ${lead.phone}, ${lead.message},
             COALESCE(${lead.submittedAt}::timestamptz, now()), 'skipped'
      FROM listings l JOIN brokers b ON b.id = l.broker_id JOIN offices o ON o.id = b.office_id
      WHERE l.id = ${listing.id}
      RETURNING partner_id, listing_id::text AS listing_id, broker_id::text AS broker_id, office_id, organization_id, created_at`;
      // The listing row was read in this transaction: the insert from it returns its row.
      if (!row) throw new Error("the simulated lead's insert returned no row");
      const announced = await announceLeadSubmitted(tx, lead.id, row, scope.mode, trace);
      // Partner webhooks: the test key's endpoints hear of it as lead.received, with the office's test count.
      await announceTestLeadReceived(tx, lead.id, row.office_id);
      return { kind: "accepted", lead: announced };
    }),
  );
}
