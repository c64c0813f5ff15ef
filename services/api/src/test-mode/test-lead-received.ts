// lead.received for a test key's simulated lead (docs/webhooks.md, "Test mode"), in the transaction that stores it.
// Live leads are announced by the leads service when it counts them; test leads are never counted there (the test
// key's lead counts read the leads table), so their count becomes true here, when the lead row commits. Test leads
// of one office are announced one transaction at a time (the same advisory lock class as the counter's), so each
// carries the office's exact test count and a later one never a smaller count.
import { LeadReceived, leadReceivedFact, type RecordMode } from "@pss/contracts";
import { insertOutboxFacts, OFFICE_LEAD_COUNT_LOCK, partnerFactRow } from "@pss/service-kit";
import type postgres from "postgres";

export async function announceTestLeadReceived(
  tx: postgres.TransactionSql,
  leadId: string,
  officeId: number,
): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock(${OFFICE_LEAD_COUNT_LOCK}, ${officeId})`;
  const [lead] = await tx<
    {
      partner_id: string;
      mode: RecordMode;
      office_id: number;
      listing_id: string;
      listing_external_id: string;
      broker_id: string;
      broker_external_id: string;
      n: number;
    }[]
  >`
    SELECT ld.partner_id, ld.mode, ld.office_id, l.id::text AS listing_id, l.external_id AS listing_external_id, b.id::text AS broker_id, b.external_id AS broker_external_id, c.n
    FROM leads ld JOIN listings l ON l.id = ld.listing_id JOIN brokers b ON b.id = ld.broker_id,
      LATERAL (SELECT count(*)::int AS n FROM leads t WHERE t.office_id = ld.office_id AND t.mode = 'test') c
    WHERE ld.id = ${leadId} AND ld.mode = 'test'`;
  if (!lead) return;
  const fact = partnerFactRow(
    LeadReceived,
    // version: the office's lead count, as in the data (the change feed's `version` of lead.received).
    { aggregateId: leadId, version: lead.n, partnerId: lead.partner_id, mode: lead.mode },
    leadReceivedFact(
      { id: lead.listing_id, external_id: lead.listing_external_id },
      { id: lead.broker_id, external_id: lead.broker_external_id },
      { officeId: lead.office_id, officeLeadCount: lead.n },
    ),
  );
  await insertOutboxFacts(tx, [fact]);
}
