// Replay: the events of a change-feed range or a time range sent (again) to one endpoint, also to an endpoint
// created after them. The bodies are built from the change feed (partner_feed keeps each fact's data) exactly as
// the webhooks service built them: the fact's data, its feed number, the records' URLs. An event this endpoint had
// already is sent again as that same delivery (same webhook-id, a fresh retry schedule, a new claim token); one
// still pending is left as it is (not queued twice); any other is a new delivery. The lead-data rule
// (lead-data-rule.ts): the scope leaves lead-data endpoints and lead.received out for a key without lead tracking,
// so such an endpoint answers as an unknown one.
//
// Bounds (docs/webhooks.md "Replay" and "Re-sending"), so one request cannot become thousands of POSTs again and
// again: one running replay per endpoint (while a delivery an earlier replay queued is pending, 429), and the daily
// re-send budget of the endpoint's audience (webhook-resend.ts; 429 with Retry-After when the range would go beyond
// it). The endpoint is locked for the whole request (webhook-resend.ts), so what is checked is what is acted on.
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
import { factsOnly } from "@pss/database/queries";
import { parseInstant, recordBound } from "../http/instants.ts";
import { BadRequestError, RateLimitedError, validationError } from "../http/errors.ts";
import { byExternalId, type ResendOptions } from "./webhook-delivery-repository.ts";
import type { WebhookScope } from "./webhook-endpoint-repository.ts";
import { resend, type ActionOutcome } from "./webhook-resend.ts";

/** Retry-After while the endpoint's previous replay is still running (its end cannot be foreseen: retries). */
export const REPLAY_RUNNING_RETRY_AFTER_SECONDS = 60;

export const REPLAY_RUNNING =
  "A replay to this endpoint is still running (deliveries it queued are pending): retry after Retry-After seconds, once the deliveries list shows them delivered or failed";

/** What a replay's budget 429 adds: a smaller range may fit sooner. */
export const REPLAY_BUDGET_HINT = " or narrow the range";

export const REPLAY_BUDGET_DOC =
  "One replay at a time per endpoint (while deliveries an earlier replay queued are pending), and the daily re-send budget (retry, recover, replay and test together, per partner and audience, over the last 24 hours): beyond either, wait Retry-After seconds";

export async function replayEvents(
  sql: postgres.Sql,
  scope: WebhookScope,
  externalId: string,
  range: WebhookReplayBody,
  opts: { publicBaseUrl: string } & ResendOptions,
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
  return resend(sql, scope, opts.dailyBudget, byExternalId(scope, externalId), async (tx, endpoint, budget) => {
    const types = endpoint.events.filter(
      (t) => (WEBHOOK_EVENT_TYPES as readonly string[]).includes(t) && (t !== "lead.received" || scope.leadData),
    );
    const n = endpoint.carriesLeadData ? tx`seq` : tx`record_seq`;
    const events = await tx`
      SELECT ${n} AS seq, type, event_id::text AS event_id, data, occurred_at FROM partner_feed
      WHERE partner_id = ${scope.partnerId}::uuid AND mode = ${scope.mode} AND type = ANY(${types}::text[]) AND ${n} IS NOT NULL
        AND ${factsOnly(tx)}
        ${range.afterSequence !== undefined ? tx`AND ${n} > ${range.afterSequence}` : tx``}
        ${range.throughSequence !== undefined ? tx`AND ${n} <= ${range.throughSequence}` : tx``}
        ${range.since ? tx`AND occurred_at >= ${recordBound(range.since)}` : tx``}
        ${range.until ? tx`AND occurred_at < ${recordBound(range.until)}` : tx``}
      ORDER BY ${n} LIMIT ${MAX_REPLAY_EVENTS + 1}`;
    if (events.length > MAX_REPLAY_EVENTS)
      throw new BadRequestError(
        `The range holds more than ${MAX_REPLAY_EVENTS} events: narrow it (afterSequence and throughSequence), or replay it in parts`,
      );
    if (events.length === 0) return { ok: 0 };
    const eventIds = events.map((e) => e.event_id as string);
    // What this endpoint already has of the range: a pending one is left as it is (never queued twice).
    const existing = new Map(
      (
        await tx`
          SELECT event_id::text AS event_id, status FROM webhook_deliveries
          WHERE endpoint_id = ${endpoint.id}::bigint AND event_id = ANY(${eventIds}::uuid[])`
      ).map((r) => [r.event_id as string, r.status as string]),
    );
    const wanted = events.filter((e) => existing.get(e.event_id) !== "pending");
    if (wanted.length === 0) return { ok: 0 };
    const [running] = await tx`
      SELECT 1 FROM webhook_deliveries WHERE endpoint_id = ${endpoint.id}::bigint AND status = 'pending' AND replay_id IS NOT NULL LIMIT 1`;
    if (running) throw new RateLimitedError(REPLAY_RUNNING_RETRY_AFTER_SECONDS, REPLAY_RUNNING);
    if (wanted.length > opts.dailyBudget)
      throw new BadRequestError(
        `The range would queue ${wanted.length} deliveries, more than the daily re-send budget of ${opts.dailyBudget}: narrow it, or replay it in parts on different days`,
      );
    await budget.require(wanted.length, REPLAY_BUDGET_HINT);
    const replayId = crypto.randomUUID();
    // Deliveries it had (delivered or failed) again, as they were: rows the worker never holds, so no wait on it.
    const again = await tx`
      UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now(), round_start = attempt_count,
        claim_token = claim_token + 1, claimed_at = NULL, replay_id = ${replayId}::uuid
      WHERE endpoint_id = ${endpoint.id}::bigint AND event_id = ANY(${wanted.filter((e) => existing.has(e.event_id)).map((e) => e.event_id)}::uuid[])
        AND status <> 'pending'
      RETURNING 1`;
    const fresh = wanted.filter((e) => !existing.has(e.event_id));
    const bodies = fresh.map((e) =>
      webhookBody(
        e.type,
        (e.occurred_at as Date).toISOString(),
        withPublicUrls(
          { ...(e.data as Record<string, unknown>), sequence: Number(e.seq) },
          opts.publicBaseUrl,
          scope.mode,
        ),
      ),
    );
    // A delivery the fan-out creates meanwhile for one of them stays (ON CONFLICT): it is that event's delivery.
    const inserted = await tx`
      INSERT INTO webhook_deliveries (id, endpoint_id, partner_id, event_id, event_type, payload, next_attempt_at, replay_id)
      SELECT gen_random_uuid(), ${endpoint.id}::bigint, ${scope.partnerId}::uuid, x.event_id, x.type, x.payload, now(), ${replayId}::uuid
      FROM unnest(${fresh.map((e) => e.event_id)}::uuid[], ${fresh.map((e) => e.type)}::text[], ${bodies}::text[]) WITH ORDINALITY AS x(event_id, type, payload, n)
      ORDER BY x.n
      ON CONFLICT (endpoint_id, event_id) DO NOTHING
      RETURNING 1`;
    const queued = again.length + inserted.length;
    await budget.spend("replay", queued, replayId);
    return { ok: queued };
  });
}
