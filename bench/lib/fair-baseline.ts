// The fair baselines for partner writes: the same semantic work a listing PUT does, driven straight from a
// PostgreSQL client with the given number of concurrent writers. No HTTP, no JSON parsing or validation, no
// merge code: only what the database has to do.
// - create: look the broker and the listing up, then insert the listing row, its photos, its first status
//   history row, its change history row (every field, long texts cut to 500 characters) and an outbox row
//   carrying the full listing payload (one statement, as the API does);
// - update: read the stored row with its photos, then write the merged full document (every column), the outbox
//   row with the full payload, the change history row (the changed field) and a status history row when the
//   status changes.
// The blind upsert of bench/lib/sql-baseline.ts stays as the "physical limit" row: it cannot implement the
// spec's semantics, but it says how fast the database can take rows at all.
import type postgres from "postgres";
import { externalId, listingBody } from "./bodies.mjs";
import { walMark, walSince, type WalUsed } from "./wal-meter.ts";

export interface BaselineResult {
  tps: number;
  p50: number;
  p99: number;
}

export interface ClosedLoopBaselineResult extends BaselineResult {
  /** Operations done (rows written). */
  rows: number;
  /** WAL from the first operation to the last (before this run's outbox rows are removed). */
  wal: WalUsed;
}

type Body = ReturnType<typeof listingBody>;

function columnsOf(sql: postgres.Sql | postgres.TransactionSql, body: Body) {
  return {
    status: body.status,
    business_type: body.businessType,
    title: body.title,
    description: body.description,
    established_at: new Date(body.establishedAt),
    street_address1: body.location.streetAddress1,
    city: body.location.city,
    state: body.location.state,
    postal_code: body.location.postalCode,
    country: body.location.country,
    visibility: body.location.visibility,
    financials: sql.json(body.financials as never),
    property: sql.json(body.property as never),
    financing: sql.json(body.financing as never),
  };
}

/** The event a consumer needs: the whole listing, as the API's outbox row carries it. */
function payloadOf(id: string, key: string, brokerId: string, body: Body, version: number) {
  const { brokerExternalId: _ignored, ...rest } = body;
  return {
    eventId: crypto.randomUUID(),
    type: "listing.upserted",
    aggregateType: "listing",
    aggregateId: id,
    version,
    payload: { ...rest, externalId: key, brokerId, listingId: id },
  };
}

/** The change history's [{path, from, to}] for a new record: every leaf, texts cut as the API cuts them. */
function creationChanges(body: Body): { path: string; from: null; to: unknown }[] {
  const { brokerExternalId, ...fields } = body;
  const out: { path: string; from: null; to: unknown }[] = [
    { path: "brokerExternalId", from: null, to: brokerExternalId },
  ];
  const walk = (value: unknown, path: string) => {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k);
    } else
      out.push({
        path,
        from: null,
        to: typeof value === "string" && value.length > 500 ? `${value.slice(0, 500)}…` : value,
      });
  };
  walk(fields, "");
  return out.sort((a, b) => (a.path < b.path ? -1 : 1));
}

export async function createOnce(
  sql: postgres.Sql,
  args: { partnerId: string; brokerExternalId: string; key: string; body: Body },
): Promise<void> {
  const [found] = await sql`
    SELECT nb.id::text AS broker_id, l.id AS listing_id
    FROM (SELECT 1) one
    LEFT JOIN brokers nb ON nb.partner_id = ${args.partnerId} AND nb.mode = 'live' AND nb.external_id = ${args.brokerExternalId}
    LEFT JOIN listings l ON l.partner_id = ${args.partnerId} AND l.mode = 'live' AND l.external_id = ${args.key}`;
  if (found!.listing_id !== null) throw new Error(`fair create baseline: ${args.key} exists already`);
  await insertCreated(sql, { ...args, brokerId: found!.broker_id as string });
}

/** The create's write: row, photos, status history, change history and outbox row in one statement. */
export async function insertCreated(
  sql: postgres.Sql | postgres.TransactionSql,
  args: { partnerId: string; brokerId: string; key: string; body: Body },
): Promise<void> {
  const { brokerId } = args;
  const row = {
    partner_id: args.partnerId,
    external_id: args.key,
    broker_id: brokerId,
    content_hash: Buffer.alloc(32, 1),
    ...columnsOf(sql, args.body),
  };
  const photos = args.body.photos;
  await sql`
    WITH l AS (
      INSERT INTO listings ${sql(row as never)} ON CONFLICT (partner_id, mode, external_id) DO NOTHING RETURNING id
    ), p AS (
      INSERT INTO listing_photos (listing_id, url, sort_key)
      SELECT l.id, x.url, x.sort_key FROM l, unnest(${photos.map((p) => p.url)}::text[], ${photos.map((p) => p.sortKey)}::int[]) AS x(url, sort_key)
    ), h AS (
      INSERT INTO listing_status_history (listing_id, from_status, to_status) SELECT l.id, NULL, ${args.body.status} FROM l
    ), c AS (
      INSERT INTO listing_history (listing_id, version, key_id, request_id, changes, status_from, status_to)
      SELECT l.id, 1, NULL, ${crypto.randomUUID()}, ${sql.json(creationChanges(args.body) as never)}::jsonb, NULL, ${args.body.status} FROM l
    )
    INSERT INTO outbox (topic, message_key, payload)
    SELECT 'bench.baseline', l.id::text, ${sql.json(payloadOf("?", args.key, brokerId, args.body, 1) as never)}::jsonb || jsonb_build_object('aggregateId', l.id::text)
    FROM l`;
}

/** The stored rows an update reads (with their photos), by external ID. */
export async function readStored(
  sql: postgres.Sql,
  partnerId: string,
  keys: string[],
): Promise<Map<string, postgres.Row>> {
  const rows = await sql`
    SELECT l.id, l.external_id, l.version, l.status, l.broker_id::text AS broker_id, l.title, l.description, l.business_type, l.financials, l.property, l.financing,
           COALESCE((SELECT json_agg(json_build_object('url', p.url, 'sortKey', p.sort_key, 'state', p.state) ORDER BY p.sort_key)
                     FROM listing_photos p WHERE p.listing_id = l.id), '[]') AS photos
    FROM listings l WHERE l.partner_id = ${partnerId} AND l.mode = 'live' AND l.external_id = ANY(${keys}::text[])`;
  return new Map(rows.map((r) => [r.external_id as string, r]));
}

export async function updateOnce(
  sql: postgres.Sql,
  args: { partnerId: string; key: string; mutate: (body: Body) => void; brokerExternalId: string },
): Promise<void> {
  const stored = (await readStored(sql, args.partnerId, [args.key])).get(args.key);
  if (!stored) throw new Error(`fair update baseline: ${args.key} does not exist`);
  await writeUpdated(sql, { ...args, stored });
}

/** The update's write: the merged full row, outbox row, change history (and status history) in one statement. */
export async function writeUpdated(
  sql: postgres.Sql | postgres.TransactionSql,
  args: { key: string; mutate: (body: Body) => void; brokerExternalId: string; stored: postgres.Row },
): Promise<void> {
  const { stored } = args;
  // The "merged" document: what is stored with the change applied (the bench body is what was stored).
  const body = listingBody(args.brokerExternalId, 0);
  Object.assign(body, {
    title: stored.title,
    description: stored.description,
    businessType: stored.business_type,
    financials: stored.financials,
    property: stored.property,
    financing: stored.financing,
  });
  body.photos = (stored.photos as { url: string; sortKey: number }[]).map((p) => ({ url: p.url, sortKey: p.sortKey }));
  const askingBefore = (body.financials as Record<string, number>).askingPrice;
  args.mutate(body);
  const statusChanged = stored.status !== body.status;
  const changes = [
    { path: "financials.askingPrice", from: askingBefore, to: (body.financials as Record<string, number>).askingPrice },
  ];
  const [written] = await sql`
    WITH u AS (
      UPDATE listings SET ${sql({ ...columnsOf(sql, body), content_hash: Buffer.alloc(32, 2) } as never)}, version = version + 1, updated_at = now(), index_state = 'pending'
      WHERE id = ${stored.id} AND version = ${stored.version}
      RETURNING id, version
    ), o AS (
      INSERT INTO outbox (topic, message_key, payload)
      SELECT 'bench.baseline', u.id::text, ${sql.json(payloadOf(String(stored.id), args.key, stored.broker_id, body, stored.version + 1) as never)} FROM u
    ), c AS (
      INSERT INTO listing_history (listing_id, version, key_id, request_id, changes, status_from, status_to)
      SELECT u.id, u.version, NULL, ${crypto.randomUUID()}, ${sql.json(changes as never)}::jsonb, NULL, NULL FROM u
    )${statusChanged ? sql`, h AS (INSERT INTO listing_status_history (listing_id, from_status, to_status) SELECT u.id, ${stored.status}, ${body.status} FROM u)` : sql``}
    SELECT version FROM u`;
  if (!written) throw new Error(`fair update baseline: lost a race on ${args.key}`);
}

/**
 * Runs `concurrency` writers for `durationSeconds`. Creates use fresh external IDs `<prefix>-<n>`; updates
 * change the asking price of `existing` listings created beforehand under the same prefix (keys are spread so
 * that no two writers touch one row at once).
 */
export async function fairBaseline(args: {
  sql: postgres.Sql;
  partnerId: string;
  brokerExternalId: string;
  concurrency: number;
  durationSeconds: number;
  prefix: string;
  mode: "create" | "update";
  existing?: number;
}): Promise<ClosedLoopBaselineResult> {
  const { sql } = args;
  const wal0 = await walMark(sql);
  const deadline = performance.now() + args.durationSeconds * 1000;
  const latencies: number[] = [];
  let next = 0;
  async function worker(w: number) {
    let round = 0;
    while (performance.now() < deadline) {
      const started = performance.now();
      if (args.mode === "create") {
        const n = next++;
        await createOnce(sql, {
          partnerId: args.partnerId,
          brokerExternalId: args.brokerExternalId,
          key: externalId(args.prefix, n),
          body: listingBody(args.brokerExternalId, n),
        });
      } else {
        // Writer w owns keys w, w + concurrency, …: no two writers race on one row.
        const perWriter = Math.max(1, Math.floor((args.existing ?? args.concurrency) / args.concurrency));
        const n = w + (round++ % perWriter) * args.concurrency;
        await updateOnce(sql, {
          partnerId: args.partnerId,
          brokerExternalId: args.brokerExternalId,
          key: externalId(args.prefix, n),
          mutate: (b) => void (b.financials.askingPrice = 100000 + round),
        });
      }
      latencies.push(performance.now() - started);
    }
  }
  const began = performance.now();
  await Promise.all(Array.from({ length: args.concurrency }, (_, w) => worker(w)));
  const result = summarise(latencies, began);
  const wal = await walSince(sql, wal0);
  await sql`DELETE FROM outbox WHERE topic = 'bench.baseline'`;
  return { ...result, rows: latencies.length, wal };
}

/** Throughput since `began` and latency percentiles (ms) of the operations measured. */
function summarise(latencies: number[], began: number): BaselineResult & { p999: number } {
  const seconds = (performance.now() - began) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))] ?? 0;
  return { tps: latencies.length / seconds, p50: at(0.5), p99: at(0.99), p999: at(0.999) };
}

/** Removes the listings a baseline wrote (photos and history go with them). */
export async function removeBaselineRows(sql: postgres.Sql, partnerId: string, prefix: string): Promise<void> {
  const like = `${prefix}-%`;
  await sql`DELETE FROM listing_photos WHERE listing_id IN (SELECT id FROM listings WHERE partner_id = ${partnerId} AND external_id LIKE ${like})`;
  await sql`DELETE FROM listing_status_history WHERE listing_id IN (SELECT id FROM listings WHERE partner_id = ${partnerId} AND external_id LIKE ${like})`;
  await sql`DELETE FROM listings WHERE partner_id = ${partnerId} AND external_id LIKE ${like}`;
}

/**
 * The fair baseline at a fixed arrival rate (open loop, like bench/lib/open-loop.mjs): each operation is due
 * at its exact 1/rate slot and its latency counts from then, so the floor the database and the disk set for
 * p99 at a given load shows up beside the API's. Creates use fresh keys; updates cycle over `existing` keys
 * created beforehand under the same prefix.
 */
export async function fairBaselineOpenLoop(args: {
  sql: postgres.Sql;
  partnerId: string;
  brokerExternalId: string;
  rate: number;
  durationSeconds: number;
  prefix: string;
  mode: "create" | "update";
  existing?: number;
}): Promise<BaselineResult & { p999: number }> {
  const { sql } = args;
  const latencies: number[] = [];
  const total = Math.round(args.rate * args.durationSeconds);
  const began = performance.now();
  const inFlight = new Set<Promise<void>>();
  // Operations on one key never overlap: a key's next update waits for its previous one (the API's open loop
  // does not serialise, but 2,000 keys at these rates never collide).
  const busy = new Map<number, Promise<void>>();
  for (let n = 0; n < total; n++) {
    const dueAt = began + (n * 1000) / args.rate;
    const wait = dueAt - performance.now();
    if (wait > 1) await Bun.sleep(wait);
    const key = args.mode === "create" ? n : n % (args.existing ?? 1);
    const before = busy.get(key) ?? Promise.resolve();
    const op: Promise<void> = before
      .then(() =>
        args.mode === "create"
          ? createOnce(sql, {
              partnerId: args.partnerId,
              brokerExternalId: args.brokerExternalId,
              key: externalId(args.prefix, key),
              body: listingBody(args.brokerExternalId, key),
            })
          : updateOnce(sql, {
              partnerId: args.partnerId,
              brokerExternalId: args.brokerExternalId,
              key: externalId(args.prefix, key),
              mutate: (b) => void (b.financials.askingPrice = 500000 + n),
            }),
      )
      .then(() => void latencies.push(performance.now() - dueAt));
    busy.set(key, op);
    inFlight.add(op);
    void op.finally(() => inFlight.delete(op));
  }
  await Promise.all(inFlight);
  const result = summarise(latencies, began);
  await sql`DELETE FROM outbox WHERE topic = 'bench.baseline'`;
  return result;
}
