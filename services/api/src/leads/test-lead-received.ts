// lead.received for a test key's simulated lead (docs/webhooks.md, "Test mode"), in the transaction that stores it.
// Live leads are announced by the leads service when it counts them; test leads are never counted there (the test
// key's lead counts read the leads table), so their count becomes true here, when the lead row commits. Test leads
// of one office are announced one transaction at a time (the same advisory lock class as the counter's), so each
// carries the office's exact test count and a later one never a smaller count.
import { leadReceivedPayload, OFFICE_LEAD_COUNT_LOCK, partnerEventOutboxColumns } from "@pss/service-kit";
import type postgres from "postgres";

export async function announceTestLeadReceived(tx: postgres.TransactionSql, leadId: string, officeId: number): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock(${OFFICE_LEAD_COUNT_LOCK}, ${officeId})`;
  await tx`
    INSERT INTO outbox (topic, message_key, payload)
    SELECT ${partnerEventOutboxColumns(tx, "lead.received", {
      aggregateId: tx`ld.id`,
      version: tx`1`,
      partnerId: tx`ld.partner_id`,
      mode: tx`ld.mode`,
      payload: leadReceivedPayload(tx, { officeId: tx`ld.office_id`, officeLeadCount: tx`c.n` }),
    })}
    FROM leads ld JOIN listings l ON l.id = ld.listing_id JOIN brokers b ON b.id = ld.broker_id,
      LATERAL (SELECT count(*)::int AS n FROM leads t WHERE t.office_id = ld.office_id AND t.mode = 'test') c
    WHERE ld.id = ${leadId} AND ld.mode = 'test'`;
}
