// The partner's view of webhook deliveries and the actions on them. The API only queues: the webhooks service
// sends whatever is pending and due (within its poll interval).
import {
  isPageCursorText,
  webhookBody,
  type WebhookDeliveryRecord,
  type WebhookDeliveryStatus,
  type DeliveredEventType,
} from "@pss/contracts";
import type postgres from "postgres";
import { BadRequestError } from "@pss/http-kit";
import { endpointNamed, inScope, type WebhookScope } from "./webhook-endpoint-repository.ts";
import { resend, type ActionOutcome } from "./webhook-resend.ts";

export type { ActionOutcome };

type Sql = postgres.Sql | postgres.TransactionSql;

/** How many attempts a listed delivery shows (the newest). */
export const LISTED_ATTEMPTS = 20;

export interface DeliveryFilter {
  scope: WebhookScope;
  endpointExternalId?: string;
  status?: WebhookDeliveryStatus;
  eventType?: DeliveredEventType;
  /** Created at or after / before (the partner portal's time filter). */
  createdFrom?: Date;
  createdBefore?: Date;
  /** One delivery (the partner portal's delivery page). */
  deliveryId?: string;
  limit: number;
  cursor?: string;
}

const CURSOR_VERSION = "d1";
const BAD_CURSOR = "cursor is not valid; pass nextCursor from the previous page unchanged";

/** Newest first: (createdAt, id) of the last delivery of a page. */
function encodeCursor(createdAt: Date, id: string): string {
  return Buffer.from(JSON.stringify([CURSOR_VERSION, createdAt.toISOString(), id])).toString("base64url");
}

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  try {
    if (!isPageCursorText(cursor)) throw new Error("not base64url");
    const parsed = JSON.parse(Buffer.from(cursor, "base64url").toString());
    if (
      Array.isArray(parsed) &&
      parsed.length === 3 &&
      parsed[0] === CURSOR_VERSION &&
      typeof parsed[1] === "string" &&
      typeof parsed[2] === "string"
    ) {
      const createdAt = new Date(parsed[1]);
      if (!Number.isNaN(createdAt.getTime()) && /^[0-9a-f-]{36}$/.test(parsed[2])) return { createdAt, id: parsed[2] };
    }
  } catch {}
  throw new BadRequestError(BAD_CURSOR);
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export async function listDeliveries(
  sql: Sql,
  f: DeliveryFilter,
): Promise<{ results: WebhookDeliveryRecord[]; nextCursor: string | null }> {
  const after = f.cursor !== undefined ? decodeCursor(f.cursor) : null;
  const rows = await sql`
    SELECT d.id::text, COALESCE(e.shown_external_id, e.external_id) AS external_id, d.event_type, d.status, d.created_at, d.delivered_at, d.next_attempt_at, d.attempt_count,
           d.last_status_code, d.last_error, d.payload,
           COALESCE((SELECT json_agg(json_build_object('attempt', a.attempt, 'at', a.at, 'statusCode', a.status_code, 'latencyMs', a.latency_ms, 'error', a.error)
                                     ORDER BY a.attempt)
                     FROM (SELECT * FROM webhook_attempts WHERE delivery_id = d.id ORDER BY attempt DESC LIMIT ${LISTED_ATTEMPTS}) a), '[]'::json) AS attempts
    FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
    WHERE d.partner_id = ${f.scope.partnerId} AND ${inScope(sql, f.scope, "e")}
      ${f.endpointExternalId !== undefined ? sql`AND ${endpointNamed(sql, f.scope, f.endpointExternalId)}` : sql``}
      ${f.status ? sql`AND d.status = ${f.status}` : sql``}
      ${f.eventType ? sql`AND d.event_type = ${f.eventType}` : sql``}
      ${f.createdFrom ? sql`AND d.created_at >= ${f.createdFrom}` : sql``}
      ${f.createdBefore ? sql`AND d.created_at < ${f.createdBefore}` : sql``}
      ${f.deliveryId ? sql`AND d.id = ${f.deliveryId}::uuid` : sql``}
      ${after ? sql`AND (d.created_at, d.id) < (${after.createdAt}, ${after.id}::uuid)` : sql``}
    ORDER BY d.created_at DESC, d.id DESC
    LIMIT ${f.limit + 1}`;
  const page = rows.slice(0, f.limit);
  const last = page[page.length - 1];
  return {
    results: page.map((r) => ({
      deliveryId: r.id,
      endpointId: r.external_id,
      eventType: r.event_type,
      status: r.status,
      createdAt: r.created_at.toISOString(),
      deliveredAt: iso(r.delivered_at),
      nextAttemptAt: r.status === "pending" ? iso(r.next_attempt_at) : null,
      attemptCount: r.attempt_count,
      lastStatusCode: r.last_status_code,
      lastError: r.last_error,
      attempts: (
        r.attempts as {
          attempt: number;
          at: string;
          statusCode: number | null;
          latencyMs: number;
          error: string | null;
        }[]
      ).map((a) => ({
        ...a,
        at: new Date(a.at).toISOString(),
      })),
      payload: JSON.parse(r.payload),
    })),
    nextCursor: rows.length > f.limit && last ? encodeCursor(last.created_at, last.id) : null,
  };
}

/**
 * A delivery made due again now by a partner's request (retry, recover), with a fresh retry schedule. It takes a
 * new claim token: an attempt in flight (claimed before) then records nothing when it finishes, so its late answer
 * cannot overwrite the "queued" this request answers (docs/webhooks.md "Claims and late writes"); the delivery is
 * claimed again only once that attempt has ended (the worker's webhook_attempts_in_flight). It is no longer part
 * of a running replay.
 */
export const requeued = (sql: Sql) =>
  sql`status = 'pending', next_attempt_at = now(), round_start = attempt_count, claim_token = claim_token + 1, claimed_at = NULL, replay_id = NULL`;

/** The re-send routes' settings. */
export interface ResendOptions {
  /** Re-sent deliveries per partner and audience in 24 hours. */
  dailyBudget: number;
}

/** The endpoint the key names (webhook-endpoint-repository.ts, endpointNamed). */
export const byExternalId = (scope: WebhookScope, externalId: string) => (tx: postgres.TransactionSql) =>
  endpointNamed(tx, scope, externalId);

/** Queues a ping to the endpoint, sent like any delivery (signed, retried); one delivery of the re-send budget. */
export async function queuePing(
  sql: postgres.Sql,
  scope: WebhookScope,
  externalId: string,
  opts: ResendOptions,
): Promise<ActionOutcome<string>> {
  return resend(sql, scope, opts.dailyBudget, byExternalId(scope, externalId), async (tx, endpoint, budget) => {
    await budget.require(1);
    const deliveryId = crypto.randomUUID();
    const body = webhookBody("ping", new Date().toISOString(), { endpointId: externalId, version: endpoint.version });
    await tx`
      INSERT INTO webhook_deliveries (id, endpoint_id, partner_id, event_id, event_type, payload, next_attempt_at)
      VALUES (${deliveryId}::uuid, ${endpoint.id}::bigint, ${scope.partnerId}, ${crypto.randomUUID()}::uuid, 'ping', ${body}, now())`;
    await budget.spend("test", 1);
    return { ok: deliveryId };
  });
}

/**
 * Sends one delivery again now with a fresh retry schedule (its webhook-id stays), after the attempt in flight if
 * there is one. A delivery already queued and not yet attempted is left as it is (not queued twice, nothing spent).
 */
export async function retryDelivery(
  sql: postgres.Sql,
  scope: WebhookScope,
  deliveryId: string,
  opts: ResendOptions,
): Promise<ActionOutcome<string>> {
  const ofDelivery = (tx: postgres.TransactionSql) =>
    tx`e.id = (SELECT endpoint_id FROM webhook_deliveries WHERE id = ${deliveryId}::uuid AND partner_id = ${scope.partnerId})`;
  return resend<string>(sql, scope, opts.dailyBudget, ofDelivery, async (tx, endpoint, budget) => {
    // NOWAIT: the worker may hold it while recording an attempt, and then wants the endpoint this holds.
    const [d] = await tx`
      SELECT status, attempt_count, round_start FROM webhook_deliveries
      WHERE id = ${deliveryId}::uuid AND endpoint_id = ${endpoint.id}::bigint FOR UPDATE NOWAIT`;
    if (!d) return { notFound: true };
    if (d.status === "pending" && d.attempt_count === d.round_start) return { ok: deliveryId };
    await budget.require(1);
    await tx`UPDATE webhook_deliveries SET ${requeued(tx)} WHERE id = ${deliveryId}::uuid`;
    await budget.spend("retry", 1);
    return { ok: deliveryId };
  });
}

export interface Recovered {
  requeued: number;
  /** Failed deliveries of the range left failed: the budget had no room for them. */
  notQueued: number;
}

/**
 * Queues again the failed deliveries of the endpoint created at or after `since`, oldest first, as many as the
 * re-send budget has room for (429 when it has none and some are failed). Only failed ones: a pending delivery is
 * never queued twice.
 */
export async function recoverDeliveries(
  sql: postgres.Sql,
  scope: WebhookScope,
  externalId: string,
  since: Date,
  opts: ResendOptions,
): Promise<ActionOutcome<Recovered>> {
  return resend(sql, scope, opts.dailyBudget, byExternalId(scope, externalId), async (tx, endpoint, budget) => {
    const failed = tx`
      SELECT id, created_at FROM webhook_deliveries WHERE endpoint_id = ${endpoint.id}::bigint AND status = 'failed' AND created_at >= ${since}`;
    const [{ n }] = (await tx`SELECT count(*)::int AS n FROM (${failed}) f`) as unknown as [{ n: number }];
    if (n === 0) return { ok: { requeued: 0, notQueued: 0 } };
    // As many as fit; none fitting is a 429 (with when one will).
    if (budget.left === 0) await budget.require(1);
    // Failed rows only: the worker never holds one (it writes pending deliveries), so this waits for no worker.
    const rows = await tx`
      UPDATE webhook_deliveries SET ${requeued(tx)}
      WHERE id IN (SELECT id FROM (${failed}) f ORDER BY created_at, id LIMIT ${budget.left})
        AND status = 'failed'
      RETURNING 1`;
    await budget.spend("recover", rows.length);
    return { ok: { requeued: rows.length, notQueued: n - rows.length } };
  });
}
