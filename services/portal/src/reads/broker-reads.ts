// The brokers list (docs/portal.md, "Brokers"): the partner's brokers of one mode by external ID, with their avatar
// state and how many listings each has; paged by external ID.
import type postgres from "postgres";
import type { PortalScope } from "./scope.ts";

export const BROKERS_PAGE = 50;

export interface BrokerRow {
  brokerId: string;
  externalId: string;
  name: string;
  avatarState: string | null;
  listings: number;
}

export async function readBrokers(
  sql: postgres.Sql,
  scope: PortalScope,
  opts: { after?: string; q?: string },
): Promise<{ rows: BrokerRow[]; next: string | null }> {
  const q = opts.q?.trim();
  const rows = await sql`
    SELECT b.id::text AS id, b.external_id, b.name, b.avatar_state,
           (SELECT count(*)::int FROM listings l WHERE l.broker_id = b.id) AS listings
    FROM brokers b
    WHERE b.partner_id = ${scope.partnerId}::uuid AND b.mode = ${scope.mode}
      ${opts.after ? sql`AND b.external_id > ${opts.after}` : sql``}
      ${q ? sql`AND (b.external_id LIKE ${`${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`} OR b.name ILIKE ${`%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`})` : sql``}
    ORDER BY b.external_id LIMIT ${BROKERS_PAGE + 1}`;
  const page = rows.slice(0, BROKERS_PAGE).map(
    (r): BrokerRow => ({
      brokerId: r.id,
      externalId: r.external_id,
      name: r.name,
      avatarState: r.avatar_state,
      listings: r.listings,
    }),
  );
  return { rows: page, next: rows.length > BROKERS_PAGE ? (page.at(-1)?.externalId ?? null) : null };
}
