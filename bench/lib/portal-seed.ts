// The portal benchmark's partner (issue 42): 100,000 live listings over 200 brokers with their report summaries (a
// realistic spread of states, scores and warnings), two history entries each, 30 days of statistics for 1,000 of
// them, 1,000,000 change-feed events, 1,000,000 API requests over the last 7 days with their daily counts, five
// webhook endpoints with 100,000 deliveries and their attempts, and a portal user with a session. Made once per
// database, in set-based statements, and found again by name on later runs (the figures are about reading, not
// writing). Each part is seeded as its owner would leave it: the report tracker's summaries, the request log's ring
// slots, the feed's numbers with their records numbering.
import { createHash, randomBytes } from "node:crypto";
import type postgres from "postgres";

export const PORTAL_BENCH_PARTNER = "bench-portal-100k";
export const LISTINGS = 100_000;
const BROKERS = 200;
const FEED_EVENTS = 1_000_000;
const REQUESTS = 1_000_000;
const DELIVERIES = 100_000;

export interface PortalSeed {
  partnerId: string;
  /** The session cookie's value for the seeded portal user (lead access). */
  sessionToken: string;
  /** A few listing external IDs spread over the table, for the listing page. */
  listingIds: string[];
  brokerIds: string[];
  seededNow: boolean;
  seconds: number;
}

export async function seedPortalPartner(sql: postgres.Sql, log: (line: string) => void): Promise<PortalSeed> {
  const started = Date.now();
  const [existing] = await sql`SELECT id::text AS id FROM partners WHERE name = ${PORTAL_BENCH_PARTNER}`;
  let partnerId = existing?.id as string | undefined;
  let seededNow = false;
  if (partnerId) {
    const [{ n }] =
      (await sql`SELECT count(*)::int AS n FROM listing_report_summaries WHERE partner_id = ${partnerId}::uuid`) as unknown as [
        { n: number },
      ];
    if (n < LISTINGS) {
      log(`portal seed: partner ${partnerId} is incomplete (${n} summaries); seeding again`);
      partnerId = undefined;
    }
  }
  if (!partnerId) {
    partnerId = await seed(sql, log);
    seededNow = true;
  }
  // A fresh session each run (sessions expire): the user with lead access.
  const sessionToken = randomBytes(32).toString("base64url");
  await sql`
    INSERT INTO portal_sessions (id_hash, user_id, expires_at)
    SELECT ${createHash("sha256").update(sessionToken).digest()}, id, now() + interval '1 day' FROM portal_users
    WHERE partner_id = ${partnerId}::uuid AND email = 'bench@portal.example'`;
  const listingIds = Array.from({ length: 50 }, (_, i) => `bench-portal-listing-${(i * 1999) % LISTINGS}`);
  const brokerIds = Array.from({ length: 20 }, (_, i) => `bench-portal-broker-${(i * 7) % BROKERS}`);
  return { partnerId, sessionToken, listingIds, brokerIds, seededNow, seconds: (Date.now() - started) / 1000 };
}

async function seed(sql: postgres.Sql, log: (line: string) => void): Promise<string> {
  const step = async (what: string, run: () => Promise<unknown>) => {
    const t = Date.now();
    await run();
    log(`portal seed: ${what} in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  };
  const [partner] = await sql`INSERT INTO partners (name) VALUES (${PORTAL_BENCH_PARTNER}) RETURNING id::text AS id`;
  const partnerId = partner!.id as string;
  const [org] =
    await sql`INSERT INTO organizations (partner_id, name) VALUES (${partnerId}::uuid, 'Bench org') RETURNING id`;
  const [office] =
    await sql`INSERT INTO offices (organization_id, name, is_default) VALUES (${org!.id}, 'Main', true) RETURNING id`;
  const [key] = await sql`
    INSERT INTO api_keys (partner_id, key_hash, key_prefix, lead_tracking)
    VALUES (${partnerId}::uuid, ${randomBytes(32)}, 'pss_live_bench', true) RETURNING id::text AS id`;
  const keyId = key!.id as string;

  await step(
    `${BROKERS} brokers`,
    () => sql`
    INSERT INTO brokers (partner_id, external_id, office_id, name, email, phone, forwarding_email, content_hash)
    SELECT ${partnerId}::uuid, 'bench-portal-broker-' || i, ${office!.id}, 'Broker ' || i, 'broker' || i || '@bench.example',
           CASE WHEN i % 10 = 0 THEN NULL ELSE '+1 512 555 0100' END, 'leads' || i || '@crm.example', '\\x00'
    FROM generate_series(0, ${BROKERS - 1}) AS i`,
  );

  await step(
    `${LISTINGS} listings`,
    () => sql`
    INSERT INTO listings (partner_id, external_id, broker_id, status, business_type, title, description, city, state, postal_code,
                          country, visibility, financials, content_hash, index_state, published_at, updated_at, created_at)
    SELECT ${partnerId}::uuid, 'bench-portal-listing-' || i,
           (SELECT id FROM brokers WHERE partner_id = ${partnerId}::uuid AND external_id = 'bench-portal-broker-' || (i % ${BROKERS})),
           (ARRAY['FOR_SALE','FOR_SALE','FOR_SALE','FOR_SALE','UNDER_CONTRACT','PENDING_CONTRACT','SOLD','DRAFT','ARCHIVED','REVIEWING_OFFERS'])[i % 10 + 1],
           'Restaurant', 'Listing ' || i || ' ' || (ARRAY['bakery','taqueria','laundromat','dental practice','gym'])[i % 5 + 1],
           repeat('A well-established business with loyal customers and trained staff. ', 4),
           'Austin', 'TX', '78701', 'US', 'SHOW_CITY_STATE',
           CASE WHEN i % 7 = 0 THEN '{"revenue": 900000}'::jsonb ELSE '{"askingPrice": 450000, "revenue": 900000}'::jsonb END,
           '\\x00', 'indexed', now() - (i % 1000) * interval '1 hour',
           now() - (i % 10000) * interval '1 minute', now() - interval '60 days'
    FROM generate_series(0, ${LISTINGS - 1}) AS i`,
  );

  await step(
    "report summaries",
    () => sql`
    INSERT INTO listing_report_summaries (listing_id, partner_id, mode, external_id, title, broker_id, status, state, score, warnings, updated_at)
    SELECT l.id, l.partner_id, l.mode, l.external_id, l.title, l.broker_id, l.status,
           CASE WHEN l.status IN ('SOLD','DRAFT','ARCHIVED') THEN 'NOT_VISIBLE'
                WHEN (l.id % 50) = 0 THEN 'PROCESSING'
                WHEN (l.id % 97) = 0 THEN 'FAILED'
                WHEN (l.id % 7) = 0 OR (l.id % 3) = 0 THEN 'LIVE_WITH_WARNINGS' ELSE 'LIVE' END,
           CASE WHEN (l.id % 7) = 0 THEN 67 WHEN (l.id % 3) = 0 THEN 88 ELSE 100 END,
           (CASE WHEN (l.id % 7) = 0 THEN ARRAY['ASKING_PRICE_MISSING','PHOTOS_TOO_FEW'] WHEN (l.id % 3) = 0 THEN ARRAY['PHOTOS_TOO_FEW'] ELSE ARRAY[]::text[] END)
             || CASE WHEN (l.id % 1000) = 0 THEN ARRAY['POSTAL_CODE_MISMATCH'] ELSE ARRAY[]::text[] END,
           l.updated_at
    FROM listings l WHERE l.partner_id = ${partnerId}::uuid`,
  );

  await step(
    "change history (2 per listing)",
    () => sql`
    INSERT INTO listing_history (listing_id, version, changed_at, key_id, request_id, changes, status_from, status_to)
    SELECT l.id, v, l.updated_at - (2 - v) * interval '1 day', ${keyId}::bigint, 'bench-' || l.id || '-' || v,
           CASE WHEN v = 1 THEN '[{"path": "title", "from": null, "to": "Listing"}]'::jsonb
                ELSE '[{"path": "financials.askingPrice", "from": 400000, "to": 450000}]'::jsonb END,
           CASE WHEN v = 1 THEN NULL ELSE NULL END, CASE WHEN v = 1 THEN l.status ELSE NULL END
    FROM listings l, generate_series(1, 2) AS v WHERE l.partner_id = ${partnerId}::uuid`,
  );

  await step(
    "statistics (30 days for 1,000 listings)",
    () => sql`
    INSERT INTO listing_stats_daily (listing_id, day, views, impressions)
    SELECT l.id, current_date - d, (l.id + d) % 40, (l.id * d) % 400
    FROM (SELECT id FROM listings WHERE partner_id = ${partnerId}::uuid AND external_id IN (
            SELECT 'bench-portal-listing-' || ((i * 1999) % ${LISTINGS}) FROM generate_series(0, 49) AS i
          ) UNION SELECT id FROM listings WHERE partner_id = ${partnerId}::uuid ORDER BY id LIMIT 1000) l,
         generate_series(0, 29) AS d
    ON CONFLICT DO NOTHING`,
  );

  await step(`${FEED_EVENTS} feed events`, async () => {
    await sql`
      INSERT INTO partner_feed_heads (partner_id, mode, last_seq, last_record_seq)
      VALUES (${partnerId}::uuid, 'live', ${FEED_EVENTS}, ${FEED_EVENTS})`;
    await sql`
      INSERT INTO partner_feed (partner_id, mode, seq, record_seq, type, event_id, record_type, version, data, occurred_at, sequenced_at)
      SELECT ${partnerId}::uuid, 'live', s, s, 'listing.updated', gen_random_uuid(), 'listing', 1 + s % 5,
             jsonb_build_object('externalListingId', 'bench-portal-listing-' || (s % ${LISTINGS})),
             now() - (${FEED_EVENTS} - s) * interval '500 milliseconds', now() - (${FEED_EVENTS} - s) * interval '500 milliseconds'
      FROM generate_series(1, ${FEED_EVENTS}) AS s`;
  });

  await step(`${REQUESTS} API requests over 7 days`, async () => {
    await sql`
      INSERT INTO api_request_log (slot, at, partner_id, mode, key_id, method, path, status, duration_ms, request_id, error)
      SELECT (floor(extract(epoch FROM t) / 86400)::int % 9)::smallint, t, ${partnerId}::uuid, 'live', ${keyId}::bigint,
             CASE WHEN r % 10 = 0 THEN 'GET' ELSE 'PUT' END,
             '/partner/v1/listings/bench-portal-listing-' || (r % ${LISTINGS}),
             CASE WHEN r % 200 = 0 THEN 400 WHEN r % 5000 = 0 THEN 503 WHEN r % 11 = 0 THEN 200 ELSE 201 END,
             3 + (r % 17), 'bench-req-' || r,
             CASE WHEN r % 200 = 0 THEN '{"status":"error","error":"financials.askingPrice: must be a number"}'::jsonb END
      FROM (SELECT r, now() - (r * (7 * 86400.0 / ${REQUESTS})) * interval '1 second' AS t FROM generate_series(1, ${REQUESTS}) AS r) x`;
    await sql`
      INSERT INTO api_request_daily (partner_id, mode, day, requests, client_errors, server_errors)
      SELECT partner_id, mode, (at AT TIME ZONE 'UTC')::date, count(*), count(*) FILTER (WHERE status BETWEEN 400 AND 499),
             count(*) FILTER (WHERE status >= 500)
      FROM api_request_log WHERE partner_id = ${partnerId}::uuid GROUP BY 1, 2, 3
      ON CONFLICT (partner_id, mode, day) DO NOTHING`;
  });

  await step(`5 webhook endpoints, ${DELIVERIES} deliveries`, async () => {
    await sql`
      INSERT INTO webhook_endpoints (partner_id, external_id, url, events, secret_encrypted, failing_since)
      SELECT ${partnerId}::uuid, 'bench-endpoint-' || i, 'https://hooks.example.com/' || i, ARRAY['listing.published','listing.report.changed'],
             'unused', CASE WHEN i = 0 THEN now() - interval '3 hours' END
      FROM generate_series(0, 4) AS i`;
    await sql`
      INSERT INTO webhook_deliveries (id, endpoint_id, partner_id, event_id, event_type, payload, status, attempt_count, last_status_code, delivered_at, created_at)
      SELECT gen_random_uuid(), e.id, ${partnerId}::uuid, gen_random_uuid(), 'listing.published', '{"type":"listing.published"}',
             CASE WHEN d % 100 = 0 THEN 'failed' WHEN d % 37 = 0 THEN 'pending' ELSE 'delivered' END,
             CASE WHEN d % 100 = 0 THEN 10 ELSE 1 END, CASE WHEN d % 100 = 0 THEN 500 ELSE 204 END,
             CASE WHEN d % 100 = 0 OR d % 37 = 0 THEN NULL ELSE now() - d * interval '20 seconds' END,
             now() - d * interval '20 seconds'
      FROM generate_series(0, ${DELIVERIES - 1}) AS d
      JOIN webhook_endpoints e ON e.partner_id = ${partnerId}::uuid AND e.external_id = 'bench-endpoint-' || (d % 5)`;
    await sql`
      INSERT INTO webhook_attempts (delivery_id, attempt, at, status_code, latency_ms)
      SELECT id, 1, created_at, last_status_code, 40 FROM webhook_deliveries WHERE partner_id = ${partnerId}::uuid`;
  });

  await sql`
    INSERT INTO portal_users (partner_id, email, lead_access, invitation_state, invitation_due_at)
    VALUES (${partnerId}::uuid, 'bench@portal.example', true, 'sent', NULL)`;
  // As a database that has run for a while: statistics, visibility map and hint bits set (otherwise the first reads
  // write every page, and autovacuum works through all of it while the pages are measured).
  await step("VACUUM ANALYZE", async () => {
    for (const table of [
      "listings",
      "listing_report_summaries",
      "listing_history",
      "listing_stats_daily",
      "partner_feed",
      "api_request_log",
      "api_request_daily",
      "webhook_deliveries",
      "webhook_attempts",
      "brokers",
    ])
      await sql.unsafe(`VACUUM (ANALYZE) ${table}`);
  });
  return partnerId;
}
