// The facts partners are told about by webhook (packages/contracts/src/webhooks.ts) are written to the outbox by
// the statement or transaction that makes them true, like every other event: the API's relay publishes them to
// Topics.partnerEvents, and nothing is announced that did not happen or lost after it happened. This builds the
// outbox row's envelope in SQL, for writers whose facts come out of their own UPDATE ... RETURNING.
import { PARTNER_EVENT_AGGREGATES, Topics, type WebhookEventType } from "@pss/contracts";
import type postgres from "postgres";

type Sql = postgres.Sql | postgres.TransactionSql;

export interface PartnerEventColumns {
  /** The aggregate's ID as text: also the Kafka key. */
  aggregateId: postgres.Fragment;
  version: postgres.Fragment;
  partnerId: postgres.Fragment;
  /** A jsonb expression: the webhook's `data` without its public URLs. */
  payload: postgres.Fragment;
  /** The record's mode, 'live' or 'test' (docs/sandbox.md): the webhooks service sends a fact only to endpoints of that mode. */
  mode: postgres.Fragment;
}

/**
 * `INSERT INTO outbox … SELECT <these columns> FROM …`: topic, message key and the event envelope. The key is
 * `<aggregate type>:<aggregate ID>` (one partition, so one order, for all facts of a record), not the bare ID the
 * aggregate's own event topic uses: readers of the outbox that look for an aggregate's events by key keep
 * finding only those.
 */
export function partnerEventOutboxColumns(sql: Sql, type: WebhookEventType, c: PartnerEventColumns): postgres.Fragment {
  return sql`${Topics.partnerEvents.name}::text, ${PARTNER_EVENT_AGGREGATES[type] + ":"}::text || (${c.aggregateId})::text, jsonb_build_object(
    'eventId', gen_random_uuid(),
    'type', ${type}::text,
    'aggregateType', ${PARTNER_EVENT_AGGREGATES[type]}::text,
    'aggregateId', (${c.aggregateId})::text,
    'version', ${c.version},
    'partnerId', ${c.partnerId},
    'occurredAt', to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'mode', (${c.mode})::text,
    'payload', ${c.payload})`;
}

/**
 * Advisory lock class of "counting an office's leads" (the second key is the office ID). Whoever announces
 * lead.received with an office's count holds it: the leads service for live leads, the API for a test key's
 * simulated ones, so each announcement carries the office's exact count and a later one never a smaller count.
 */
export const OFFICE_LEAD_COUNT_LOCK = 727_013;

/**
 * lead.received's payload (`data` without URLs), read from the listing and broker rows under the aliases `l` and
 * `b` of the writer's FROM clause, with the office and its new lead count. One shape for live and test leads.
 */
export function leadReceivedPayload(sql: Sql, c: { officeId: postgres.Fragment; officeLeadCount: postgres.Fragment }): postgres.Fragment {
  return sql`jsonb_build_object('externalListingId', l.external_id, 'serviceListingId', l.id, 'externalBrokerId', b.external_id,
        'serviceBrokerId', b.id::text, 'officeId', ${c.officeId}, 'officeLeadCount', ${c.officeLeadCount}, 'version', ${c.officeLeadCount})`;
}
