// The API requests page (docs/portal.md, "API requests"): the partner's requests of the last 7 days from the
// request log the API writes (api_request_log), newest first, filtered by status class, path and key, keyset-paged.
// The lead routes' requests (lead counts, simulated leads) are shown only to people with lead access.
import type postgres from "postgres";
import { REQUEST_LOG_DAYS, REQUEST_LOG_SLOTS, utcDayNumber } from "@pss/api/request-log-slots";
import type { PortalScope } from "./scope.ts";

export const REQUESTS_PAGE = 100;
export const STATUS_CLASSES = ["2xx", "3xx", "4xx", "5xx"] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];
/** What a person without lead access does not see: requests of the routes that answer with lead figures. */
export const LEAD_ROUTES = "^/partner/v1/((offices|organizations)/[^/]+/leads/count|test/listings/[^/]+/leads)([/?]|$)";

export interface RequestFilter {
  statusClass?: StatusClass;
  /** The path starts with this (query included). */
  path?: string;
  keyId?: string;
  /** "<at ISO>|<requestId>" of the previous page's last row. */
  before?: string;
}

export interface RequestRow {
  at: string;
  keyId: string;
  keyPrefix: string | null;
  method: string;
  path: string;
  status: number;
  durationMs: number;
  requestId: string;
  error: unknown;
}

export function parseBefore(raw: string | undefined): { at: string; requestId: string } | null {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)\|([A-Za-z0-9._:-]{1,64})$/.exec(raw ?? "");
  return m?.[1] && m[2] ? { at: m[1], requestId: m[2] } : null;
}

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

export async function readRequests(
  sql: postgres.Sql,
  scope: PortalScope,
  filter: RequestFilter,
): Promise<{ rows: RequestRow[]; next: string | null }> {
  const before = parseBefore(filter.before);
  const low = filter.statusClass ? Number(filter.statusClass[0]) * 100 : null;
  // Day by day, newest first: each day is one partition of the log (its ring slot), read until the page is full.
  // One query over all nine would make PostgreSQL open every partition's index and find a first matching row in
  // each before answering (a Merge Append), however few rows the page needs; a rare filter still reads them all.
  const now = Date.now();
  const newestDay = before ? Math.min(utcDayNumber(Date.parse(before.at)), utcDayNumber(now)) : utcDayNumber(now);
  const oldestDay = utcDayNumber(now - REQUEST_LOG_DAYS * 86_400_000);
  const found: postgres.Row[] = [];
  for (let day = newestDay; day >= oldestDay && found.length <= REQUESTS_PAGE; day--) {
    const rows = await sql`
      SELECT to_char(r.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at, r.key_id::text AS key_id, k.key_prefix,
             r.method, r.path, r.status, r.duration_ms, r.request_id, r.error
      FROM api_request_log r LEFT JOIN api_keys k ON k.id = r.key_id
      WHERE r.slot = ${day % REQUEST_LOG_SLOTS} AND r.partner_id = ${scope.partnerId}::uuid AND r.mode = ${scope.mode}
        AND r.at >= ${new Date(Math.max(day * 86_400_000, now - REQUEST_LOG_DAYS * 86_400_000))} AND r.at < ${new Date((day + 1) * 86_400_000)}
        ${low !== null ? sql`AND r.status >= ${low} AND r.status < ${low + 100}` : sql``}
        ${filter.path ? sql`AND r.path LIKE ${`${likeEscape(filter.path)}%`}` : sql``}
        ${filter.keyId ? sql`AND r.key_id = ${filter.keyId}::bigint` : sql``}
        ${scope.leadAccess ? sql`` : sql`AND r.path !~ ${LEAD_ROUTES}`}
        ${before ? sql`AND (r.at, r.request_id) < (${before.at}::timestamptz, ${before.requestId})` : sql``}
      ORDER BY r.at DESC, r.request_id DESC
      LIMIT ${REQUESTS_PAGE + 1 - found.length}`;
    found.push(...rows);
  }
  const page = found.slice(0, REQUESTS_PAGE).map(
    (r): RequestRow => ({
      at: r.at,
      keyId: r.key_id,
      keyPrefix: r.key_prefix,
      method: r.method,
      path: r.path,
      status: r.status,
      durationMs: r.duration_ms,
      requestId: r.request_id,
      error: r.error,
    }),
  );
  const last = page.at(-1);
  return { rows: page, next: found.length > REQUESTS_PAGE && last ? `${last.at}|${last.requestId}` : null };
}

/** The partner's keys of this mode, for the key filter (revoked ones too: their requests are in the log). */
export async function readKeys(sql: postgres.Sql, scope: PortalScope) {
  return sql<{ id: string; key_prefix: string; revoked: boolean }[]>`
    SELECT id::text AS id, key_prefix, revoked_at IS NOT NULL AS revoked FROM api_keys
    WHERE partner_id = ${scope.partnerId}::uuid AND mode = ${scope.mode} ORDER BY id`;
}
