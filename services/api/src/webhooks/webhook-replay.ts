// Replay: the events of a change-feed range or a time range sent (again) to one endpoint, also to an endpoint
// created after them. The bodies are built from the change feed (partner_feed keeps each fact's data) exactly as
// the webhooks service built them: the fact's data, its feed number, the records' URLs. An event this endpoint had
// already is sent again as that same delivery (same webhook-id, a fresh retry schedule); any other is a new
// delivery. The lead-data rule (lead-data-rule.ts): the route's guard answers 401 for a lead-data endpoint named by
// a key without lead tracking, and the scope below leaves such endpoints and lead.received out for such a key.
// Numbers are the endpoint's numbering, as the webhooks service sends them (fact-handler.ts): the full sequence
// for an endpoint that carries lead data, the records audience's (no lead events, no holes) for any other; the
// range's afterSequence and throughSequence count in that numbering too.
import {
  MAX_REPLAY_EVENTS,
  WEBHOOK_EVENT_TYPES,
  webhookBody,
  withPublicUrls,
  type WebhookReplayBody,
} from "@pss/contracts";
import type postgres from "postgres";
import { parseInstant, recordBound } from "../http/instants.ts";
import { BadRequestError, validationError } from "../http/errors.ts";
import type { ActionOutcome } from "./webhook-delivery-repository.ts";
import { inScope, type WebhookScope } from "./webhook-endpoint-repository.ts";

export async function replayEvents(
  sql: postgres.Sql,
  scope: WebhookScope,
  externalId: string,
  range: WebhookReplayBody,
  publicBaseUrl: string,
): Promise<ActionOutcome<number>> {
  if (
    range.afterSequence !== undefined &&
    range.throughSequence !== undefined &&
    range.throughSequence <= range.afterSequence
  ) {
    throw validationError([{ path: "throughSequence", message: "must be greater than afterSequence" }]);
  }
  if (range.since && range.until && parseInstant(range.until) <= parseInstant(range.since))
    throw validationError([{ path: "until", message: "must be later than since" }]);
  const [endpoint] =
    await sql`SELECT id::text, enabled, events, carries_lead_data FROM webhook_endpoints WHERE ${inScope(sql, scope)} AND external_id = ${externalId}`;
  if (!endpoint) return { notFound: true };
  if (!endpoint.enabled) return { endpointDisabled: true };
  const types = (endpoint.events as string[]).filter(
    (t) => (WEBHOOK_EVENT_TYPES as readonly string[]).includes(t) && (t !== "lead.received" || scope.leadData),
  );
  const n = endpoint.carries_lead_data ? sql`seq` : sql`record_seq`;
  const events = await sql`
    SELECT ${n} AS seq, type, event_id::text AS event_id, data, occurred_at FROM partner_feed
    WHERE partner_id = ${scope.partnerId}::uuid AND mode = ${scope.mode} AND type = ANY(${types}::text[]) AND ${n} IS NOT NULL
      ${range.afterSequence !== undefined ? sql`AND ${n} > ${range.afterSequence}` : sql``}
      ${range.throughSequence !== undefined ? sql`AND ${n} <= ${range.throughSequence}` : sql``}
      ${range.since ? sql`AND occurred_at >= ${recordBound(range.since)}` : sql``}
      ${range.until ? sql`AND occurred_at < ${recordBound(range.until)}` : sql``}
    ORDER BY ${n} LIMIT ${MAX_REPLAY_EVENTS + 1}`;
  if (events.length > MAX_REPLAY_EVENTS)
    throw new BadRequestError(
      `The range holds more than ${MAX_REPLAY_EVENTS} events: narrow it (afterSequence and throughSequence), or replay it in parts`,
    );
  if (events.length === 0) return { ok: 0 };
  const bodies = events.map((e) =>
    webhookBody(
      e.type,
      (e.occurred_at as Date).toISOString(),
      withPublicUrls({ ...(e.data as Record<string, unknown>), sequence: Number(e.seq) }, publicBaseUrl, scope.mode),
    ),
  );
  const queued = await sql`
    INSERT INTO webhook_deliveries (id, endpoint_id, partner_id, event_id, event_type, payload, next_attempt_at)
    SELECT gen_random_uuid(), ${endpoint.id}::bigint, ${scope.partnerId}::uuid, x.event_id, x.type, x.payload, now()
    FROM unnest(${events.map((e) => e.event_id)}::uuid[], ${events.map((e) => e.type)}::text[], ${bodies}::text[]) WITH ORDINALITY AS x(event_id, type, payload, n)
    ORDER BY x.n
    ON CONFLICT (endpoint_id, event_id) DO UPDATE SET status = 'pending', next_attempt_at = now(), round_start = webhook_deliveries.attempt_count
    RETURNING 1`;
  return { ok: queued.length };
}
