// Turns each fact on Topics.partnerEvents into one delivery per enabled endpoint of the partner subscribed to
// its type. Idempotent: a fact consumed again (redelivery, a rebalance, a replayed dead letter) finds its
// deliveries already there (unique per endpoint and event ID) and creates none. A test record's fact (envelope mode
// "test", docs/sandbox.md) goes only to endpoints a test key created, a live one only to live endpoints.
import {
  decodePayload,
  eventMode,
  FEED_RETENTION_DAYS,
  isUuid,
  isWebhookEventType,
  PARTNER_FACTS,
  webhookBody,
  type AnyEventEnvelope,
} from "@pss/contracts";
import { createFeedSequencer, PermanentError, type Logger } from "@pss/service-kit";
import type postgres from "postgres";
import { withPublicUrls } from "./webhook-payload.ts";

export interface FactHandlerDeps {
  sql: postgres.Sql;
  logger: Logger;
  publicBaseUrl: string;
  /** New deliveries exist: the worker should look now. */
  onDeliveriesCreated: () => void;
  /** When set, facts of other partners are skipped (tests share Kafka). */
  onlyPartners?: ReadonlySet<string>;
}

/** How long a fact waits for its change-feed number before it is delivered without one (a fact from before the feed). */
const SEQUENCE_WAIT_MS = 30_000;

export function createFactHandler(deps: FactHandlerDeps) {
  // Passes of the change feed's numbering (one at a time across every process, by its lock): a fact is sent with
  // the number GET /partner/v1/events gives it, so it is numbered here if the API's sequencer has not done it yet.
  const sequencer = createFeedSequencer({ sql: deps.sql, logger: deps.logger }, { retentionDays: FEED_RETENTION_DAYS });
  async function sequenceOf(eventId: string): Promise<number | null> {
    const deadline = Date.now() + SEQUENCE_WAIT_MS;
    for (;;) {
      const [row] = await deps.sql`SELECT seq FROM partner_feed WHERE event_id = ${eventId}::uuid ORDER BY seq LIMIT 1`;
      if (row) return Number(row.seq);
      if (Date.now() > deadline) {
        deps.logger.warn("fact has no change-feed number; delivered without sequence", { eventId });
        return null;
      }
      if ((await sequencer.runOnce()) === 0) await Bun.sleep(50);
    }
  }

  return async function handle(event: AnyEventEnvelope): Promise<void> {
    // Another kind of event on this topic (a newer producer): not ours to deliver.
    if (!isWebhookEventType(event.type)) return;
    if (deps.onlyPartners && !deps.onlyPartners.has(event.partnerId)) return;
    if (!isUuid(event.partnerId)) throw new PermanentError("partnerId is not a UUID");
    const data = event.payload;
    if (typeof data !== "object" || data === null || Array.isArray(data))
      throw new PermanentError(`${event.type} payload is not an object`);
    // The catalog's reader form of the fact (packages/contracts/src/events): fields it does not know are sent on as they came.
    const decoded = decodePayload(PARTNER_FACTS[event.type].reader, data, event.type);
    if (!decoded.ok) throw new PermanentError(decoded.reason);
    // No endpoint takes it: nothing to deliver, no number needed.
    const [takers] = await deps.sql`
      SELECT count(*)::int AS n FROM webhook_endpoints e
      WHERE e.partner_id = ${event.partnerId}::uuid AND e.mode = ${eventMode(event)} AND e.enabled AND ${event.type} = ANY(e.events)`;
    if (takers!.n === 0) return;
    const sequence = await sequenceOf(event.eventId);
    const withSequence =
      sequence === null ? (data as Record<string, unknown>) : { ...(data as Record<string, unknown>), sequence };
    const body = webhookBody(
      event.type,
      event.occurredAt,
      withPublicUrls(withSequence, deps.publicBaseUrl, eventMode(event)),
    );
    const created = await deps.sql`
      INSERT INTO webhook_deliveries (id, endpoint_id, partner_id, event_id, event_type, payload, next_attempt_at)
      SELECT gen_random_uuid(), e.id, e.partner_id, ${event.eventId}::uuid, ${event.type}, ${body}, now()
      FROM webhook_endpoints e
      WHERE e.partner_id = ${event.partnerId}::uuid AND e.mode = ${eventMode(event)} AND e.enabled AND ${event.type} = ANY(e.events)
      ON CONFLICT (endpoint_id, event_id) DO NOTHING
      RETURNING id`;
    if (created.length > 0) {
      deps.logger.debug("deliveries created", {
        eventId: event.eventId,
        type: event.type,
        partnerId: event.partnerId,
        deliveries: created.length,
      });
      deps.onDeliveriesCreated();
    }
  };
}
