// The webhooks page's reads beyond what the API's own functions give (@pss/api/webhook-actions: endpoints and the
// delivery log in the person's scope): each endpoint's failure streak, and the first bytes of each attempt's answer.
import type postgres from "postgres";

/** Failed attempts since the endpoint's last success, counted up to this many. */
export const STREAK_CAP = 1000;
/** The longest a delivery is retried (WEBHOOK_RETRY_SCHEDULE's sum is about 3 days): older deliveries have no attempt since. */
const RETRIED_FOR = "4 days";

/**
 * Each failing endpoint's streak: its attempts since failing_since (the first failure after its last success, which
 * the webhooks service keeps), counted up to STREAK_CAP through the deliveries created in the retry window before
 * it. An endpoint that answers (failing_since NULL) has none: nothing is read for it.
 */
export async function failureStreaks(sql: postgres.Sql, endpointIds: string[]): Promise<Map<string, number>> {
  if (endpointIds.length === 0) return new Map();
  const rows = await sql`
    SELECT e.id::text AS id,
           CASE WHEN e.failing_since IS NULL THEN 0 ELSE (SELECT count(*)::int FROM (
              SELECT 1 FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id
              WHERE d.endpoint_id = e.id AND d.created_at >= e.failing_since - ${RETRIED_FOR}::interval
                AND a.at >= e.failing_since
              LIMIT ${STREAK_CAP}) f) END AS streak
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
