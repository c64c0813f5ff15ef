// The overview's figures (docs/portal.md, "Overview"), each one query over a narrow table: listings by status and
// by processing state, open warnings by code, the quality-score distribution (listing_report_summaries, kept by the
// report tracker), deliveries failing now (webhook endpoints and their pending deliveries), the API's requests and
// errors per day (api_request_daily) and, with lead access only, inquiries.
import type postgres from "postgres";
import { recentlyUnsummarized } from "./listing-reads.ts";
import { lastDays, type PortalScope } from "./scope.ts";

export interface Overview {
  /** Summarized listings and those written in the last minutes that are not yet. */
  listings: number;
  /** Listings the report tracker has summarized (the figures below cover these). */
  summarized: number;
  byStatus: Map<string, number>;
  byState: Map<string, number>;
  warnings: { code: string; listings: number }[];
  /** Listings per score band: index 0 is 0-9, … 9 is 90-100. */
  scoreBands: number[];
  failingEndpoints: {
    endpointId: string;
    url: string;
    failingSince: string | null;
    enabled: boolean;
    retrying: number;
    failedToday: number;
  }[];
  requests: { days: string[]; total: number[]; clientErrors: number[]; serverErrors: number[] };
  /** Only with lead access (null otherwise: the query is not even made). */
  inquiries: { days: string[]; counts: number[] } | null;
}

export async function readOverview(sql: postgres.Sql, scope: PortalScope): Promise<Overview> {
  const days7 = lastDays(7);
  const days30 = lastDays(30);
  const [first7 = "", first30 = ""] = [days7[0], days30[0]];
  // One pass over the partner's summaries, grouped finely enough to give every figure below (a few hundred groups
  // at most: statuses × states × score bands × the warning combinations that occur).
  const [groups, pending, endpoints, requests, inquiries] = await Promise.all([
    sql`
      SELECT status, state, least(score / 10, 9)::int AS band, warnings, count(*)::int AS n FROM listing_report_summaries
      WHERE partner_id = ${scope.partnerId}::uuid AND mode = ${scope.mode} GROUP BY 1, 2, 3, 4`,
    recentlyUnsummarized(sql, scope),
    sql`
      SELECT COALESCE(e.shown_external_id, e.external_id) AS external_id, e.url, e.enabled, to_char(e.failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS failing_since,
             (SELECT count(*)::int FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.status = 'pending' AND d.attempt_count > 0
                AND d.created_at > now() - interval '7 days') AS retrying,
             (SELECT count(*)::int FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.status = 'failed'
                AND d.created_at > now() - interval '1 day') AS failed_today
      FROM webhook_endpoints e
      WHERE e.partner_id = ${scope.partnerId}::uuid AND e.mode = ${scope.mode}
        ${scope.leadAccess ? sql`` : sql`AND NOT e.carries_lead_data`}
        AND (e.failing_since IS NOT NULL OR NOT e.enabled)
      ORDER BY e.failing_since NULLS LAST, 1`,
    sql`
      SELECT to_char(day, 'YYYY-MM-DD') AS day, requests, client_errors, server_errors FROM api_request_daily
      WHERE partner_id = ${scope.partnerId}::uuid AND mode = ${scope.mode} AND day >= ${first7}::date`,
    scope.leadAccess
      ? sql`
          SELECT to_char((l.created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS day, count(*)::int AS n FROM leads l
          WHERE l.partner_id = ${scope.partnerId}::uuid AND l.mode = ${scope.mode}
            AND l.created_at >= ${first30}::date AT TIME ZONE 'UTC'
          GROUP BY 1`
      : Promise.resolve(null),
  ]);
  const byStatus = new Map<string, number>();
  const byState = new Map<string, number>();
  const byWarning = new Map<string, number>();
  const scoreBands = Array<number>(10).fill(0);
  let summarized = 0;
  for (const r of groups) {
    byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + r.n);
    byState.set(r.state, (byState.get(r.state) ?? 0) + r.n);
    for (const code of r.warnings as string[]) byWarning.set(code, (byWarning.get(code) ?? 0) + r.n);
    scoreBands[r.band] = (scoreBands[r.band] ?? 0) + r.n;
    summarized += r.n;
  }
  const perDay = new Map(requests.map((r) => [r.day as string, r]));
  const leadDays = inquiries ? new Map(inquiries.map((r) => [r.day as string, r.n as number])) : null;
  return {
    listings: summarized + pending,
    summarized,
    byStatus,
    byState,
    warnings: [...byWarning]
      .map(([code, listings]) => ({ code, listings }))
      .sort((a, b) => b.listings - a.listings || a.code.localeCompare(b.code)),
    scoreBands,
    failingEndpoints: endpoints.map((e) => ({
      endpointId: e.external_id,
      url: e.url,
      failingSince: e.failing_since,
      enabled: e.enabled,
      retrying: e.retrying,
      failedToday: e.failed_today,
    })),
    requests: {
      days: days7,
      total: days7.map((d) => perDay.get(d)?.requests ?? 0),
      clientErrors: days7.map((d) => perDay.get(d)?.client_errors ?? 0),
      serverErrors: days7.map((d) => perDay.get(d)?.server_errors ?? 0),
    },
    inquiries: leadDays ? { days: days30, counts: days30.map((d) => leadDays.get(d) ?? 0) } : null,
  };
}
