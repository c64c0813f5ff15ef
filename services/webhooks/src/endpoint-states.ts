// Endpoints by state, for metrics and tests: enabled and answering, enabled but failing, or disabled and why.
import type postgres from "postgres";

export const ENDPOINT_STATES = [
  "active",
  "failing",
  "disabled_by_partner",
  "disabled_gone",
  "disabled_failing",
] as const;
export type EndpointState = (typeof ENDPOINT_STATES)[number];

export async function readEndpointStates(
  sql: postgres.Sql,
  partnerIds?: readonly string[],
): Promise<Record<EndpointState, number>> {
  const rows = await sql<{ state: EndpointState; n: number }[]>`
    SELECT CASE WHEN enabled AND failing_since IS NULL THEN 'active' WHEN enabled THEN 'failing'
                WHEN disabled_cause = 'partner' THEN 'disabled_by_partner' WHEN disabled_cause = 'gone' THEN 'disabled_gone'
                ELSE 'disabled_failing' END AS state, count(*)::int AS n
    FROM webhook_endpoints
    ${partnerIds ? sql`WHERE partner_id = ANY(${partnerIds as string[]}::uuid[])` : sql``}
    GROUP BY 1`;
  const states = Object.fromEntries(ENDPOINT_STATES.map((s) => [s, 0])) as Record<EndpointState, number>;
  for (const r of rows) states[r.state] = r.n;
  return states;
}
