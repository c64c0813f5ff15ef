// The webhooks page's reads beyond what the API's own functions give (@pss/api/webhook-actions: endpoints and the
// delivery log in the person's scope): each endpoint's failure streak, and the first bytes of each attempt's answer.
import type postgres from "postgres";

/** Failed attempts since the endpoint's last success, counted up to this many. */
export const STREAK_CAP = 1000;

export async function failureStreaks(sql: postgres.Sql, endpointIds: string[]): Promise<Map<string, number>> {
  if (endpointIds.length === 0) return new Map();
  const rows = await sql`
    SELECT e.id::text AS id,
           (SELECT count(*)::int FROM (
              SELECT 1 FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id
              WHERE d.endpoint_id = e.id AND a.at > COALESCE(e.last_success_at, '-infinity'::timestamptz)
                AND (a.status_code IS NULL OR a.status_code < 200 OR a.status_code >= 300)
              LIMIT ${STREAK_CAP}) f) AS streak
    FROM webhook_endpoints e WHERE e.id = ANY(${endpointIds}::bigint[])`;
  return new Map(rows.map((r) => [r.id as string, r.streak as number]));
}

/** The first bytes of each attempt's answer, of deliveries the caller found in scope. */
export async function responseExcerpts(
  sql: postgres.Sql,
  deliveryIds: string[],
): Promise<Map<string, Map<number, string>>> {
  const out = new Map<string, Map<number, string>>();
  if (deliveryIds.length === 0) return out;
  const rows = await sql`
    SELECT delivery_id::text AS delivery_id, attempt, response_excerpt FROM webhook_attempts
    WHERE delivery_id = ANY(${deliveryIds}::uuid[]) AND response_excerpt IS NOT NULL`;
  for (const r of rows) {
    let m = out.get(r.delivery_id);
    if (!m) out.set(r.delivery_id, (m = new Map()));
    m.set(r.attempt, r.response_excerpt);
  }
  return out;
}
