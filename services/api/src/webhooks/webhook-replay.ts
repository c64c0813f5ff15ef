// Replay: the events of a change-feed range or a time range sent (again) to one endpoint, also to an endpoint
// created after them. The bodies are built from the change feed (partner_feed keeps each fact's data) exactly as
// the webhooks service built them: the fact's data, its feed number, the records' URLs. An event this endpoint had
// already is sent again as that same delivery (same webhook-id, a fresh retry schedule, a new claim token); one
// still pending is left as it is (not queued twice); any other is a new delivery. The lead-data rule
// (lead-data-rule.ts): the scope leaves lead-data endpoints and lead.received out for a key without lead tracking,
// so such an endpoint answers as an unknown one.
//
// Bounds (docs/webhooks.md "Replay"), so one request cannot become thousands of POSTs again and again: one running
// replay per endpoint (while a delivery an earlier replay queued is pending, 429), and a daily budget of replayed
// deliveries per partner over the last 24 hours (429 with Retry-After when the range would go beyond it). A key
// without lead tracking's budget counts only replays to endpoints it can see (it learns nothing of the others).
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
import { BadRequestError, RateLimitedError, validationError } from "../http/errors.ts";
import type { ActionOutcome } from "./webhook-delivery-repository.ts";
import { inScope, type WebhookScope } from "./webhook-endpoint-repository.ts";

/** Replayed deliveries a partner may queue in 24 hours (WEBHOOK_REPLAY_DAILY_BUDGET). */
export const DEFAULT_REPLAY_DAILY_BUDGET = 10_000;
/** Retry-After while the endpoint's previous replay is still running (its end cannot be foreseen: retries). */
export const REPLAY_RUNNING_RETRY_AFTER_SECONDS = 60;

export const REPLAY_RUNNING =
  "A replay to this endpoint is still running (deliveries it queued are pending): retry after Retry-After seconds, once the deliveries list shows them delivered or failed";

export const REPLAY_BUDGET_DOC =
  "One replay at a time per endpoint (while deliveries an earlier replay queued are pending), and a daily budget of replayed deliveries per partner over the last 24 hours: beyond either, wait Retry-After seconds";

const budgetSpent = (used: number, budget: number, wanted: number) =>
  `Daily replay budget reached: ${used} of ${budget} deliveries replayed in the last 24 hours, and this range would queue ${wanted} more; retry after Retry-After seconds or narrow the range`;

export async function replayEvents(
  sql: postgres.Sql,
  scope: WebhookScope,
  externalId: string,
  range: WebhookReplayBody,
  opts: { publicBaseUrl: string; dailyBudget: number },
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
      withPublicUrls(
        { ...(e.data as Record<string, unknown>), sequence: Number(e.seq) },
        opts.publicBaseUrl,
        scope.mode,
      ),
    ),
  );
  const eventIds = events.map((e) => e.event_id as string);
  return sql.begin(async (tx): Promise<ActionOutcome<number>> => {
    // One replay of the partner at a time: the running check, the budget and the queueing agree.
    await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`pss.webhook-replay:${scope.partnerId}`}, 0))`;
    const [{ n: pending }] = (await tx`
      SELECT count(*)::int AS n FROM webhook_deliveries
      WHERE endpoint_id = ${endpoint.id}::bigint AND status = 'pending' AND event_id = ANY(${eventIds}::uuid[])`) as unknown as [
      { n: number },
    ];
    const wanted = events.length - pending;
    if (wanted === 0) return { ok: 0 };
    const [running] = await tx`
      SELECT 1 FROM webhook_deliveries WHERE endpoint_id = ${endpoint.id}::bigint AND status = 'pending' AND replay_id IS NOT NULL LIMIT 1`;
    if (running) throw new RateLimitedError(REPLAY_RUNNING_RETRY_AFTER_SECONDS, REPLAY_RUNNING);
    if (wanted > opts.dailyBudget)
      throw new BadRequestError(
        `The range would queue ${wanted} deliveries, more than the daily replay budget of ${opts.dailyBudget}: narrow it, or replay it in parts on different days`,
      );
    await tx`DELETE FROM webhook_replays WHERE partner_id = ${scope.partnerId}::uuid AND created_at <= now() - interval '1 day'`;
    // Retry-After: when enough of the budget used has aged out of the 24 hours for this range to fit.
    const [budget] = (await tx`
      WITH r AS (
        SELECT created_at, sum(queued) OVER (ORDER BY created_at, id) AS freed, sum(queued) OVER () AS used
        FROM webhook_replays
        WHERE partner_id = ${scope.partnerId}::uuid AND created_at > now() - interval '1 day'
          ${scope.leadData ? tx`` : tx`AND NOT lead_data`}
      )
      SELECT COALESCE((SELECT max(used) FROM r), 0)::int AS used,
             (SELECT ceil(extract(epoch FROM min(created_at) + interval '1 day' - now()))::int FROM r
              WHERE used - freed + ${wanted} <= ${opts.dailyBudget}) AS retry_after`) as unknown as [
      { used: number; retry_after: number | null },
    ];
    if (budget.used + wanted > opts.dailyBudget)
      throw new RateLimitedError(
        Math.max(1, budget.retry_after ?? 1),
        budgetSpent(budget.used, opts.dailyBudget, wanted),
      );
    const replayId = crypto.randomUUID();
    const queued = await tx`
      INSERT INTO webhook_deliveries (id, endpoint_id, partner_id, event_id, event_type, payload, next_attempt_at, replay_id)
      SELECT gen_random_uuid(), ${endpoint.id}::bigint, ${scope.partnerId}::uuid, x.event_id, x.type, x.payload, now(), ${replayId}::uuid
      FROM unnest(${eventIds}::uuid[], ${events.map((e) => e.type)}::text[], ${bodies}::text[]) WITH ORDINALITY AS x(event_id, type, payload, n)
      ORDER BY x.n
      ON CONFLICT (endpoint_id, event_id) DO UPDATE SET status = 'pending', next_attempt_at = now(),
        round_start = webhook_deliveries.attempt_count, claim_token = webhook_deliveries.claim_token + 1,
        claimed_at = NULL, replay_id = excluded.replay_id
      WHERE webhook_deliveries.status <> 'pending'
      RETURNING 1`;
    await tx`
      INSERT INTO webhook_replays (id, partner_id, endpoint_id, lead_data, queued)
      VALUES (${replayId}::uuid, ${scope.partnerId}::uuid, ${endpoint.id}::bigint, ${endpoint.carries_lead_data}, ${queued.length})`;
    return { ok: queued.length };
  });
}
