// The lead row and its lead.submitted event, written in one transaction: a 202 means the lead is durable.
import {
  isBuyerVisible,
  LeadSubmitted,
  leadSubmittedPayload,
  type LeadSubmittedPayload,
  type RecordMode,
} from "@pss/contracts";
import type { EventTrace } from "@pss/service-kit";
import type postgres from "postgres";
import { listingVisibleToBuyers } from "../buyers/buyer-visibility.ts";
import { appendEvent } from "../outbox/outbox-writer.ts";
import type { RecordScope } from "../records/record-scope.ts";
import { retryTransaction } from "../records/transaction-retry.ts";
import { announceTestLeadReceived } from "./test-lead-received.ts";

export interface NewLead {
  id: string;
  listingId: string;
  name: string;
  email: string;
  phone: string | null;
  message: string;
}

type LeadRow = {
  partner_id: string;
  listing_id: string;
  broker_id: string;
  office_id: number;
  organization_id: number;
  created_at: Date;
};

async function announce(
  tx: postgres.TransactionSql,
  leadId: string,
  row: LeadRow,
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
      const [row] = await tx<LeadRow[]>`
      INSERT INTO leads (id, partner_id, listing_id, broker_id, office_id, organization_id, buyer_name, buyer_email, buyer_phone, message)
      SELECT ${lead.id}, l.partner_id, l.id, l.broker_id, b.office_id, o.organization_id, ${lead.name}, ${lead.email}, ${lead.phone}, ${lead.message}
      FROM listings l JOIN brokers b ON b.id = l.broker_id JOIN offices o ON o.id = b.office_id
      WHERE l.id = ${lead.listingId} AND ${listingVisibleToBuyers(tx, "l")}
      RETURNING partner_id, listing_id::text AS listing_id, broker_id::text AS broker_id, office_id, organization_id, created_at`;
      if (!row) return null;
      return announce(tx, lead.id, row, "live", trace);
    }),
  );
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
  lead: Omit<NewLead, "listingId"> & { submittedAt: Date | null },
  trace?: EventTrace,
): Promise<SimulatedLeadOutcome> {
  return retryTransaction(() =>
    sql.begin(async (tx): Promise<SimulatedLeadOutcome> => {
      const [listing] = await tx<{ id: string; status: string }[]>`
      SELECT id::text AS id, status FROM listings WHERE partner_id = ${scope.partnerId} AND mode = ${scope.mode} AND external_id = ${externalListingId}`;
      if (!listing) return { kind: "notFound" };
      // The status half of the buyers' rule: were the listing live, could a buyer send this lead now?
      if (!isBuyerVisible(listing.status)) return { kind: "notVisible", status: listing.status };
      const [row] = await tx<LeadRow[]>`
      INSERT INTO leads (id, partner_id, mode, listing_id, broker_id, office_id, organization_id, buyer_name, buyer_email, buyer_phone, message, created_at, delivery_state)
      SELECT ${lead.id}, l.partner_id, l.mode, l.id, l.broker_id, b.office_id, o.organization_id, ${lead.name}, ${lead.email}, ${lead.phone}, ${lead.message},
             COALESCE(${lead.submittedAt}::timestamptz, now()), 'skipped'
      FROM listings l JOIN brokers b ON b.id = l.broker_id JOIN offices o ON o.id = b.office_id
      WHERE l.id = ${listing.id}
      RETURNING partner_id, listing_id::text AS listing_id, broker_id::text AS broker_id, office_id, organization_id, created_at`;
      const announced = await announce(tx, lead.id, row!, scope.mode, trace);
      // Partner webhooks: the test key's endpoints hear of it as lead.received, with the office's test count.
      await announceTestLeadReceived(tx, lead.id, row!.office_id);
      return { kind: "accepted", lead: announced };
    }),
  );
}
