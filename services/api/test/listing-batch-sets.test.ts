// The set-based write of a listing batch (listing-batch-writes.ts) against the real API and PostgreSQL: one mixed
// batch of creates, updates, an identical repeat, a refused item and an item that loses a version race to a
// concurrent single PUT. Every item's answer, and every row stored for it (listing, photos, change and status
// history, outbox events), is checked, and the stored records are compared with the same writes sent as PUTs.
// Then a batch whose shared transaction fails as a whole: every item is run alone.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type postgres from "postgres";
import { uniqueName } from "../../../test/support/env.ts";
import { call, sample, startApi, type ApiHarness, type Partner } from "./support/harness.ts";
import { untilWaitingOnLock } from "./support/lock-waits.ts";

let api: ApiHarness;
beforeAll(async () => {
  api = await startApi({ relay: false });
});
afterAll(() => api?.stop());

/** IDs, times and URLs differ between two partners: replaced by what they are. */
const normalized = (value: unknown): unknown =>
  JSON.parse(
    JSON.stringify(value, (key, v) => {
      if (
        [
          "serviceListingId",
          "serviceBrokerId",
          "listingId",
          "brokerId",
          "createdAt",
          "updatedAt",
          "changedAt",
          "occurredAt",
          "eventId",
        ].includes(key)
      )
        return typeof v;
      if (typeof v === "string" && /^https?:\/\/[^/]+\/(listings|l|p)\//.test(v)) return v.replace(/\d+/g, "N");
      return v;
    }),
  );

async function stored(partnerId: string, externalId: string): Promise<postgres.Row | null> {
  const [row] = await api.sql`
    SELECT l.id, l.version, l.title, l.description_optimized, l.write_xid::text AS xid,
      (SELECT json_agg(json_build_array(h.version, h.status_from, h.status_to, (SELECT json_agg(c->>'path') FROM jsonb_array_elements(h.changes) c)) ORDER BY h.id) FROM listing_history h WHERE h.listing_id = l.id) AS history,
      (SELECT json_agg(json_build_array(s.from_status, s.to_status) ORDER BY s.id) FROM listing_status_history s WHERE s.listing_id = l.id) AS statuses,
      (SELECT json_agg(json_build_array(p.url, p.sort_key) ORDER BY p.sort_key) FROM listing_photos p WHERE p.listing_id = l.id) AS photos,
      (SELECT json_agg(json_build_object('id', o.id, 'version', (o.payload->'version')::int, 'payload', o.payload->'payload') ORDER BY o.id)
         FROM outbox o WHERE o.topic = 'pss.listing-events.v1' AND o.message_key = l.id::text) AS events
    FROM listings l WHERE l.partner_id = ${partnerId} AND l.external_id = ${externalId}`;
  return row ?? null;
}

const photo = (name: string, sortKey: number) => ({ url: `https://images.example.com/${name}.jpg`, sortKey });

test("a mixed batch: set-based creates and updates, a repeat, a refusal and a lost race each answered and stored as alone", async () => {
  const batched = await api.createPartner();
  const single = await api.createPartner();
  const broker = uniqueName("b");
  const ids = { c1: "", u1: "", n1: "", v1: "", u2: "", r1: "", c2: "" };
  for (const k of Object.keys(ids) as (keyof typeof ids)[]) ids[k] = uniqueName(k);
  for (const p of [batched, single]) {
    expect((await p.put(`/partner/v1/brokers/${broker}`, sample.broker())).status).toBe(201);
    for (const id of [ids.u1, ids.n1, ids.u2, ids.r1])
      expect((await p.put(`/partner/v1/listings/${id}`, sample.listing(broker))).status).toBe(201);
    // A rewrite exists: a description change clears it, other changes keep it.
    await api.sql`UPDATE listings SET description_optimized = 'rewritten' WHERE partner_id = ${p.partnerId}`;
  }
  const items = [
    { id: ids.c1, body: sample.listing(broker, { title: "new one" }) },
    { id: ids.u1, body: { title: "retitled", description: "A new description." } },
    { id: ids.n1, body: sample.listing(broker) },
    { id: ids.v1, body: sample.listing(broker, { financials: { askingPrice: -5 } }) },
    { id: ids.u2, body: { status: "UNDER_CONTRACT", photos: [photo("kitchen", 1), photo("patio", 3)] } },
    { id: ids.r1, body: { title: "from the batch" } },
    { id: ids.c2, body: sample.listing(broker, { photos: [] }) },
  ];

  // The race, made certain: an uncommitted row with c2's key holds the batch's create statement (and the update
  // statement pipelined behind it) after the batch has read r1; a single PUT then changes r1; the row is rolled
  // back, so c2 is created and r1's version-guarded update misses.
  const blocker = await api.sql.reserve();
  const [{ id: brokerId }] = await blocker<
    [{ id: string }]
  >`SELECT id FROM brokers WHERE partner_id = ${batched.partnerId} AND external_id = ${broker}`;
  await blocker`BEGIN`;
  let batchDone: ReturnType<typeof call> | undefined;
  try {
    await blocker`
      INSERT INTO listings (partner_id, external_id, broker_id, status, business_type, city, state, country, visibility, content_hash)
      VALUES (${batched.partnerId}, ${ids.c2}, ${brokerId}, 'DRAFT', 'x', 'x', 'TX', 'US', 'SHOW_STATE_ONLY', '\\x00')`;
    batchDone = call(api.baseUrl, "POST", "/partner/v1/listings/batch", {
      key: batched.apiKey,
      body: { items: items.map((i) => ({ externalListingId: i.id, listing: i.body })) },
    });
    await untilWaitingOnLock(api.sql, "INSERT INTO listings (id,", "the batch's create waits for the uncommitted row");
    const concurrent = await batched.put(`/partner/v1/listings/${ids.r1}`, { financials: { askingPrice: 1 } });
    expect(concurrent.status).toBe(200);
  } finally {
    await blocker`ROLLBACK`;
    blocker.release();
  }
  const batch = await batchDone!;

  expect(batch.status).toBe(200);
  expect(batch.body.counts).toEqual({ created: 2, updated: 3, unchanged: 1, failed: 1 });
  const answers = batch.body.results.map((r: any) => [r.externalListingId, r.httpStatus, r.changed]);
  expect(answers).toEqual([
    [ids.c1, 201, true],
    [ids.u1, 200, true],
    [ids.n1, 200, false],
    [ids.v1, 400, false],
    [ids.u2, 200, true],
    [ids.r1, 200, true],
    [ids.c2, 201, true],
  ]);
  expect(batch.body.results[3].body.details).toEqual([
    { path: "financials.askingPrice", message: "must be at least 0" },
  ]);

  const found = await Promise.all(
    Object.entries(ids).map(async ([k, id]) => [k, await stored(batched.partnerId, id)] as const),
  );
  // Every item but the refused one is stored.
  expect(found.filter(([, row]) => row === null).map(([k]) => k)).toEqual(["v1"]);
  const rows = Object.fromEntries(found) as Record<Exclude<keyof typeof ids, "v1">, postgres.Row>;
  const versions = (k: keyof typeof rows) => rows[k].events.map((e: { version: number }) => e.version);
  // One history row and one event per version written, none for the identical repeat.
  expect([rows.c1.version, rows.c1.history.length, rows.c1.history[0].slice(0, 3), versions("c1")]).toEqual([
    1,
    1,
    [1, null, "FOR_SALE"],
    [1],
  ]);
  expect(rows.c1.history[0][3]).toContain("title");
  expect([rows.c2.version, rows.c2.photos, versions("c2")]).toEqual([1, null, [1]]);
  expect(rows.c1.photos).toEqual([
    [photo("front", 1).url, 1],
    [photo("kitchen", 2).url, 2],
  ]);
  expect(rows.c1.statuses).toEqual([[null, "FOR_SALE"]]);
  expect([rows.n1.version, rows.n1.history.length, versions("n1")]).toEqual([1, 1, [1]]);
  expect([rows.u1.version, rows.u1.title, rows.u1.description_optimized, versions("u1")]).toEqual([
    2,
    "retitled",
    null,
    [1, 2],
  ]);
  expect(rows.u1.history[1]).toEqual([2, null, null, ["description", "title"]]);
  expect([rows.u2.version, rows.u2.description_optimized, versions("u2")]).toEqual([2, "rewritten", [1, 2]]);
  expect(rows.u2.history[1].slice(0, 3)).toEqual([2, "FOR_SALE", "UNDER_CONTRACT"]);
  expect(rows.u2.history[1][3]).toContain("status");
  expect(rows.u2.statuses).toEqual([
    [null, "FOR_SALE"],
    ["FOR_SALE", "UNDER_CONTRACT"],
  ]);
  expect(rows.u2.photos).toEqual([
    [photo("kitchen", 1).url, 1],
    [photo("patio", 3).url, 3],
  ]);
  // The lost race was run again alone: merged onto the concurrent PUT's version, in its own transaction.
  expect([rows.r1.version, rows.r1.title, versions("r1")]).toEqual([3, "from the batch", [1, 2, 3]]);
  expect(rows.r1.events[2].payload.financials.askingPrice).toBe(1);
  expect(rows.r1.history.map((h: unknown[]) => h[0])).toEqual([1, 2, 3]);
  // The others were written together: one transaction, their events in item order.
  const together = (["c1", "u1", "u2", "c2"] as const).map((k) => rows[k]);
  expect(new Set(together.map((r) => r.xid)).size).toBe(1);
  expect(rows.r1.xid).not.toBe(rows.c1.xid);
  const eventIds = together.map((r) => Number(r.events.at(-1).id));
  expect([...eventIds].sort((a, b) => a - b)).toEqual(eventIds);

  // The same writes as single PUTs store the same records and announce the same events.
  for (const item of items.filter((i) => i.id !== ids.r1))
    await single.put(`/partner/v1/listings/${item.id}`, item.body);
  for (const k of ["c1", "u1", "n1", "u2", "c2"] as const) {
    const [a, b] = [await compared(single, ids[k]), await compared(batched, ids[k])];
    expect({ k, ...b }).toEqual({ k, ...a });
  }
});

async function compared(partner: Partner, externalId: string) {
  const got = await partner.get(`/partner/v1/listings/${externalId}`);
  const row = (await stored(partner.partnerId, externalId))!;
  return {
    status: got.status,
    listing: normalized(got.body),
    events: normalized(row.events.map((e: { version: number; payload: unknown }) => [e.version, e.payload])),
    history: row.history,
    statuses: row.statuses,
    photos: row.photos,
  };
}

test("a batch whose shared transaction fails (a named broker deleted meanwhile) runs every item alone", async () => {
  const partner = await api.createPartner();
  const [kept, gone] = [uniqueName("kept"), uniqueName("gone")];
  for (const b of [kept, gone])
    expect((await partner.put(`/partner/v1/brokers/${b}`, sample.broker())).status).toBe(201);
  const [x1, x2, y] = [uniqueName("x1"), uniqueName("x2"), uniqueName("y")];
  expect((await partner.put(`/partner/v1/listings/${y}`, sample.listing(kept))).status).toBe(201);

  // The broker's delete, uncommitted, holds the batch's create of x2 (its foreign key check) after the batch has
  // read the broker; once the delete commits, that check fails and the whole shared transaction with it.
  const blocker = await api.sql.reserve();
  await blocker`BEGIN`;
  let batchDone: ReturnType<typeof call> | undefined;
  try {
    await blocker`DELETE FROM brokers WHERE partner_id = ${partner.partnerId} AND external_id = ${gone}`;
    batchDone = call(api.baseUrl, "POST", "/partner/v1/listings/batch", {
      key: partner.apiKey,
      body: {
        items: [
          { externalListingId: x1, listing: sample.listing(kept) },
          { externalListingId: x2, listing: sample.listing(gone) },
          { externalListingId: y, listing: { title: "changed" } },
        ],
      },
    });
    await untilWaitingOnLock(api.sql, "INSERT INTO listings (id,", "the batch's create waits for the broker's delete");
  } finally {
    await blocker`COMMIT`;
    blocker.release();
  }
  const batch = await batchDone!;
  expect(batch.body.results.map((r: any) => [r.httpStatus, r.body.error ?? r.body.message])).toEqual([
    [201, "Listing created"],
    [404, "Broker not found"],
    [200, "Listing updated"],
  ]);
  const [a, b, c] = [
    await stored(partner.partnerId, x1),
    await stored(partner.partnerId, x2),
    await stored(partner.partnerId, y),
  ];
  expect(b).toBeNull();
  expect([a!.version, a!.events.length, c!.version, c!.title, c!.events.length]).toEqual([1, 1, 2, "changed", 2]);
  // Each was written alone, in its own transaction.
  expect(a!.xid).not.toBe(c!.xid);
});
