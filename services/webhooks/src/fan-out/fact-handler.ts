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
import { activeTraceparent, createFeedSequencer, PermanentError, type Logger } from "@pss/service-kit";
import type postgres from "postgres";
import { factsOnly } from "@pss/database/queries";
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

/**
 * How long a fact that WILL get a change-feed number (its feed draft is still waiting for the sequencer) waits for
 * it before it is delivered without one; only a sequencer that keeps failing makes it wait that long.
 */
const SEQUENCE_WAIT_MS = 30_000;

/** A fact's two feed numbers (docs/partner-api.md "Change feed"): every event's, and the one without lead events. */
interface FeedNumbers {
  seq: number;
  recordSeq: number | null;
}

export function createFactHandler(deps: FactHandlerDeps) {
  // Passes of the change feed's numbering (one at a time across every process, by its lock): a fact is sent with
  // the number GET /partner/v1/events gives it, so it is numbered here if the API's sequencer has not done it yet.
  const sequencer = createFeedSequencer({ sql: deps.sql, logger: deps.logger }, { retentionDays: FEED_RETENTION_DAYS });
  async function numbersOf(eventId: string): Promise<FeedNumbers | null> {
    const deadline = Date.now() + SEQUENCE_WAIT_MS;
    for (;;) {
      // One statement, so one snapshot: the sequencer numbers a fact's draft and deletes it in one transaction
      // (and turns a previous release's feed_pending row into a draft in that same one), so the fact is either
      // numbered, or still waiting (a draft, or a legacy row), or will never be numbered (from before the feed, its
      // number already removed by retention (a replayed dead letter), a deleted partner's, or a row the feed does
      // not carry). Only a waiting one is worth waiting for; the rest go now, without a number, and the partition
      // moves on.
      const [row] = await deps.sql`
        SELECT f.seq, f.record_seq,
          EXISTS (SELECT 1 FROM feed_drafts d WHERE d.event_id = ${eventId}::uuid AND ${factsOnly(deps.sql, "d")})
            OR EXISTS (SELECT 1 FROM outbox o WHERE o.feed_pending AND o.payload->>'eventId' = ${eventId}) AS waiting
        FROM (SELECT 1) one
        LEFT JOIN LATERAL (SELECT seq, record_seq FROM partner_feed WHERE event_id = ${eventId}::uuid ORDER BY seq LIMIT 1) f ON true`;
      if (row!.seq !== null)
        return { seq: Number(row!.seq), recordSeq: row!.record_seq === null ? null : Number(row!.record_seq) };
      if (!row!.waiting) {
        deps.logger.info("fact gets no change-feed number; delivered without sequence", { eventId });
        return null;
      }
      if (Date.now() > deadline) {
        deps.logger.warn("fact has no change-feed number yet; delivered without sequence", { eventId });
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
    const numbers = await numbersOf(event.eventId);
    // Each endpoint gets the numbering of the keys that can see it (lead-data-rule.ts): one that carries lead data
    // (only keys with lead tracking see it) the full sequence; any other the records audience's, which has no hole
    // where a lead was, so its deliveries cannot count leads.
    const type = event.type;
    const bodyWith = (sequence: number | null | undefined) =>
      webhookBody(
        type,
        event.occurredAt,
        withPublicUrls(
          sequence === null || sequence === undefined
            ? (data as Record<string, unknown>)
            : { ...(data as Record<string, unknown>), sequence },
          deps.publicBaseUrl,
          eventMode(event),
        ),
      );
    const leadBody = bodyWith(numbers?.seq);
    const recordsBody = bodyWith(numbers?.recordSeq);
    const created = await deps.sql`
      INSERT INTO webhook_deliveries (id, endpoint_id, partner_id, event_id, event_type, payload, next_attempt_at, traceparent)
      SELECT gen_random_uuid(), e.id, e.partner_id, ${event.eventId}::uuid, ${event.type}, CASE WHEN e.carries_lead_data THEN ${leadBody} ELSE ${recordsBody} END, now(), ${activeTraceparent()}::text
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
