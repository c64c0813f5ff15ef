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
import { BadRequestError } from "../http/errors.ts";
import { inScope, type WebhookScope } from "./webhook-endpoint-repository.ts";

type Sql = postgres.Sql | postgres.TransactionSql;

/** How many attempts a listed delivery shows (the newest). */
export const LISTED_ATTEMPTS = 20;

export interface DeliveryFilter {
  scope: WebhookScope;
  endpointExternalId?: string;
  status?: WebhookDeliveryStatus;
  eventType?: DeliveredEventType;
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
    SELECT d.id::text, e.external_id, d.event_type, d.status, d.created_at, d.delivered_at, d.next_attempt_at, d.attempt_count,
           d.last_status_code, d.last_error, d.payload,
           COALESCE((SELECT json_agg(json_build_object('attempt', a.attempt, 'at', a.at, 'statusCode', a.status_code, 'latencyMs', a.latency_ms, 'error', a.error)
                                     ORDER BY a.attempt)
                     FROM (SELECT * FROM webhook_attempts WHERE delivery_id = d.id ORDER BY attempt DESC LIMIT ${LISTED_ATTEMPTS}) a), '[]'::json) AS attempts
    FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
    WHERE d.partner_id = ${f.scope.partnerId} AND ${inScope(sql, f.scope, "e")}
      ${f.endpointExternalId !== undefined ? sql`AND e.external_id = ${f.endpointExternalId}` : sql``}
      ${f.status ? sql`AND d.status = ${f.status}` : sql``}
      ${f.eventType ? sql`AND d.event_type = ${f.eventType}` : sql``}
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
 * cannot overwrite the "queued" this request answers (docs/webhooks.md "Claims and late writes"). It is no longer
 * in flight, nor part of a running replay.
 */
export const requeued = (sql: Sql) =>
  sql`status = 'pending', next_attempt_at = now(), round_start = attempt_count, claim_token = claim_token + 1, claimed_at = NULL, replay_id = NULL`;

export type ActionOutcome<T> = { ok: T } | { notFound: true } | { endpointDisabled: true };

/** Queues a ping to the endpoint, sent like any delivery (signed, retried). */
export async function queuePing(sql: Sql, scope: WebhookScope, externalId: string): Promise<ActionOutcome<string>> {
  const [endpoint] =
    await sql`SELECT id::text, enabled, version FROM webhook_endpoints WHERE ${inScope(sql, scope)} AND external_id = ${externalId}`;
  if (!endpoint) return { notFound: true };
  if (!endpoint.enabled) return { endpointDisabled: true };
  const deliveryId = crypto.randomUUID();
  const body = webhookBody("ping", new Date().toISOString(), { endpointId: externalId, version: endpoint.version });
  await sql`
    INSERT INTO webhook_deliveries (id, endpoint_id, partner_id, event_id, event_type, payload, next_attempt_at)
    VALUES (${deliveryId}::uuid, ${endpoint.id}::bigint, ${scope.partnerId}, ${crypto.randomUUID()}::uuid, 'ping', ${body}, now())`;
  return { ok: deliveryId };
}

/** Sends one delivery again now, whatever its state, with a fresh retry schedule; its webhook-id stays. */
export async function retryDelivery(sql: Sql, scope: WebhookScope, deliveryId: string): Promise<ActionOutcome<string>> {
  const [row] = await sql`
    SELECT e.enabled FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
    WHERE d.id = ${deliveryId}::uuid AND ${inScope(sql, scope, "e")}`;
  if (!row) return { notFound: true };
  if (!row.enabled) return { endpointDisabled: true };
  await sql`
    UPDATE webhook_deliveries SET ${requeued(sql)}
    WHERE id = ${deliveryId}::uuid AND partner_id = ${scope.partnerId}`;
  return { ok: deliveryId };
}

/** Queues again every failed delivery of the endpoint created at or after `since`; how many. */
export async function recoverDeliveries(
  sql: Sql,
  scope: WebhookScope,
  externalId: string,
  since: Date,
): Promise<ActionOutcome<number>> {
  const [endpoint] =
    await sql`SELECT id::text, enabled FROM webhook_endpoints WHERE ${inScope(sql, scope)} AND external_id = ${externalId}`;
  if (!endpoint) return { notFound: true };
  if (!endpoint.enabled) return { endpointDisabled: true };
  const rows = await sql`
    UPDATE webhook_deliveries SET ${requeued(sql)}
    WHERE endpoint_id = ${endpoint.id}::bigint AND status = 'failed' AND created_at >= ${since}
    RETURNING 1`;
  return { ok: rows.length };
}
