// Batch upserts against the real API and PostgreSQL. The core check is a comparison: the same rounds of items
// are sent by one partner as single PUTs and by another as batches, and every item's answer (status and body)
// and every effect (the stored record, its version, change history, status history, outbox events) must be the
// same. Then: a bad item among good ones, malformed batches that write nothing, dry runs that write nothing,
// test mode, and rate limiting counted per item.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BATCH_MAX_ITEMS } from "@pss/contracts";
import { uniqueName, withinOneRateWindow } from "../../../test/support/env.ts";
import { call, sample, startApi, type ApiHarness, type Partner, type TestResponse } from "./support/harness.ts";

let api: ApiHarness;

beforeAll(async () => {
  api = await startApi({ relay: false });
});
afterAll(() => api?.stop());

type Item = { id: string; body: unknown };
const listingBatch = (key: string, items: Item[], query = "") =>
  call(api.baseUrl, "POST", `/partner/v1/listings/batch${query}`, {
    key,
    body: { items: items.map((i) => ({ externalListingId: i.id, listing: i.body })) },
  });
const brokerBatch = (key: string, items: Item[], query = "") =>
  call(api.baseUrl, "POST", `/partner/v1/brokers/batch${query}`, {
    key,
    body: { items: items.map((i) => ({ externalBrokerId: i.id, broker: i.body })) },
  });

/** IDs and URLs the service assigns differ between two partners: replaced by what they are. */
function normalized(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (key, v) => {
      if (
        ["serviceListingId", "serviceBrokerId", "createdAt", "updatedAt", "changedAt", "requestId", "keyId"].includes(
          key,
        )
      )
        return typeof v;
      if (["serviceListingUrl", "serviceProfileUrl"].includes(key))
        return typeof v === "string" ? v.replace(/\d+/g, "N") : v;
      return v;
    }),
  );
}

/** Everything a write leaves for one partner's records, keyed by external ID. */
async function effects(partnerId: string) {
  const listings = await api.sql`
    SELECT l.external_id, l.version, b.external_id AS broker,
      (SELECT count(*)::int FROM listing_history h WHERE h.listing_id = l.id) AS history,
      (SELECT json_agg(h.changes ORDER BY h.version) FROM listing_history h WHERE h.listing_id = l.id) AS changes,
      (SELECT json_agg(json_build_array(s.from_status, s.to_status) ORDER BY s.id) FROM listing_status_history s WHERE s.listing_id = l.id) AS statuses,
      (SELECT json_agg(json_build_array(p.url, p.sort_key) ORDER BY p.sort_key) FROM listing_photos p WHERE p.listing_id = l.id) AS photos,
      (SELECT json_agg((o.payload->'version')::int ORDER BY o.id) FROM outbox o WHERE o.topic = 'pss.listing-events.v1' AND o.message_key = l.id::text) AS events
    FROM listings l JOIN brokers b ON b.id = l.broker_id WHERE l.partner_id = ${partnerId} ORDER BY l.external_id`;
  const brokers = await api.sql`
    SELECT b.external_id, b.version, encode(b.content_hash, 'hex') AS hash,
      (SELECT json_agg(h.changes ORDER BY h.version) FROM broker_history h WHERE h.broker_id = b.id) AS changes,
      (SELECT json_agg((o.payload->'version')::int ORDER BY o.id) FROM outbox o WHERE o.topic = 'pss.broker-events.v1' AND o.message_key = b.id::text) AS events
    FROM brokers b WHERE b.partner_id = ${partnerId} ORDER BY b.external_id`;
  return { listings: listings.map((r) => ({ ...r })), brokers: brokers.map((r) => ({ ...r })) };
}

async function totals(partnerId: string) {
  const [row] = await api.sql`
    SELECT (SELECT count(*) FROM listings WHERE partner_id = ${partnerId})::int AS listings,
           (SELECT count(*) FROM brokers WHERE partner_id = ${partnerId})::int AS brokers,
           (SELECT coalesce(sum(version), 0) FROM listings WHERE partner_id = ${partnerId})::int AS listing_versions,
           (SELECT coalesce(sum(version), 0) FROM brokers WHERE partner_id = ${partnerId})::int AS broker_versions,
           (SELECT count(*) FROM outbox WHERE payload->>'partnerId' = ${partnerId})::int AS outbox`;
  return row;
}

/** Sends each round as single PUTs (partner `single`) and as one batch (partner `batched`); answers must match. */
async function compareRounds(kind: "listings" | "brokers", rounds: Item[][], single: Partner, batched: Partner) {
  for (const [r, round] of rounds.entries()) {
    const singles: TestResponse[] = [];
    for (const item of round)
      singles.push(
        await call(api.baseUrl, "PUT", `/partner/v1/${kind}/${encodeURIComponent(item.id)}`, {
          key: single.apiKey,
          body: item.body,
        }),
      );
    const batch =
      kind === "listings" ? await listingBatch(batched.apiKey, round) : await brokerBatch(batched.apiKey, round);
    expect(batch.status).toBe(200);
    expect(batch.body.results).toHaveLength(round.length);
    round.forEach((item, i) => {
      const got = batch.body.results[i];
      expect(got[kind === "listings" ? "externalListingId" : "externalBrokerId"]).toBe(item.id);
      expect({ round: r, item: i, status: got.httpStatus, body: normalized(got.body) }).toEqual({
        round: r,
        item: i,
        status: singles[i]!.status,
        body: normalized(singles[i]!.body),
      });
    });
  }
}

describe("every item of a batch does exactly what its single PUT does", () => {
  test("listings: creates, updates, identical repeats, inline brokers, status moves, photos, and every kind of refusal", async () => {
    const single = await api.createPartner();
    const batched = await api.createPartner();
    const brokerA = uniqueName("ba");
    const brokerB = uniqueName("bb");
    for (const p of [single, batched]) {
      expect((await p.put(`/partner/v1/brokers/${brokerA}`, sample.broker())).status).toBe(201);
      expect((await p.put(`/partner/v1/brokers/${brokerB}`, sample.broker({ name: "Bob" }))).status).toBe(201);
    }
    const ids = Array.from({ length: 8 }, (_, i) => uniqueName(`l${i}`));
    const inlineBroker = uniqueName("bi");
    const rounds: Item[][] = [
      // Creates, among them refusals: a body breaking the schema, a text rule, a create without required parts, an unknown broker, an invalid ID.
      [
        { id: ids[0]!, body: sample.listing(brokerA) },
        { id: ids[1]!, body: sample.listing(brokerB, { status: "DRAFT", photos: [] }) },
        { id: ids[2]!, body: { ...sample.listing(brokerA), status: "LIVE" } },
        { id: ids[3]!, body: sample.listing(brokerA, { title: "bad\u0007title" }) },
        { id: ids[4]!, body: { title: "Only a title" } },
        { id: ids[5]!, body: sample.listing(uniqueName("nobody")) },
        { id: " padded", body: sample.listing(brokerA) },
        // Naming the broker an item further on creates inline: not there yet (404); naming it after that item: found.
        { id: ids[6]!, body: sample.listing(inlineBroker) },
        {
          id: uniqueName("inline"),
          body: {
            ...sample.listing(inlineBroker),
            brokerExternalId: undefined,
            broker: { externalBrokerId: inlineBroker, name: "Ina", email: "ina@example.com" },
          },
        },
        { id: ids[7]!, body: sample.listing(inlineBroker, { status: "DRAFT" }) },
      ],
      // Updates: nested merge, a status move, photos replaced, a reassignment, an identical repeat, a create naming the broker created inline above.
      [
        { id: ids[0]!, body: { financials: { askingPrice: 400000 }, status: "UNDER_CONTRACT" } },
        {
          id: ids[1]!,
          body: { photos: [{ url: "https://images.example.com/x.jpg", sortKey: 1 }], brokerExternalId: brokerA },
        },
        { id: ids[2]!, body: sample.listing(brokerA) },
        { id: ids[3]!, body: sample.listing(inlineBroker) },
        {
          id: ids[4]!,
          body: {
            brokerExternalId: brokerA,
            broker: { externalBrokerId: brokerB, name: "Bob", email: "bob@example.com" },
          },
        },
      ],
      // Identical repeats (no event, no history row), a no-op merge, and a real change next to them.
      [
        { id: ids[0]!, body: { financials: { askingPrice: 400000 }, status: "UNDER_CONTRACT" } },
        { id: ids[1]!, body: {} },
        { id: ids[2]!, body: { title: null, status: "SOLD" } },
        { id: ids[3]!, body: sample.listing(inlineBroker) },
      ],
    ];
    await compareRounds("listings", rounds, single, batched);
    const [a, b] = [await effects(single.partnerId), await effects(batched.partnerId)];
    expect(b).toEqual(a);
    // The comparison compared something: creates, updates, repeats and refusals all happened.
    expect(a.listings.length).toBe(6);
    expect(a.listings.find((l) => l.external_id === ids[0])!.events).toEqual([1, 2]);
  });

  test("brokers: creates, merges, list replacement, identical repeats and refusals", async () => {
    const single = await api.createPartner();
    const batched = await api.createPartner();
    const ids = Array.from({ length: 4 }, (_, i) => uniqueName(`b${i}`));
    const rounds: Item[][] = [
      [
        { id: ids[0]!, body: sample.broker() },
        { id: ids[1]!, body: { name: "Min", email: "min@example.com" } },
        { id: ids[2]!, body: { name: "No e-mail" } },
        { id: ids[3]!, body: sample.broker({ licenses: [{ country: "usa" }] }) },
        { id: "tab\tin-id", body: sample.broker() },
      ],
      [
        { id: ids[0]!, body: sample.broker() },
        {
          id: ids[1]!,
          body: { name: "Min", email: "min@example.com", profile: { bio: "New" }, serviceAreas: [{ state: "TX" }] },
        },
        { id: ids[2]!, body: { name: "Now valid", email: "valid@example.com", phone: "not a phone" } },
        { id: ids[3]!, body: sample.broker({ serviceAreas: [] }) },
      ],
    ];
    await compareRounds("brokers", rounds, single, batched);
    const [a, b] = [await effects(single.partnerId), await effects(batched.partnerId)];
    expect(b).toEqual(a);
    // The repeat of ids[0] wrote no event; ids[2] was refused both times; ids[3] was created in round two.
    const events = Object.fromEntries(a.brokers.map((x) => [x.external_id, x.events]));
    expect(events).toEqual({ [ids[0]!]: [1], [ids[1]!]: [1, 2], [ids[3]!]: [1] });
  });
});

describe("batches as a whole", () => {
  test("one bad item does not fail the others; counts sum up the answers", async () => {
    const partner = await api.createPartner();
    const broker = uniqueName("b");
    await partner.put(`/partner/v1/brokers/${broker}`, sample.broker());
    const good = Array.from({ length: 20 }, () => ({ id: uniqueName("good"), body: sample.listing(broker) }));
    const bad = { id: uniqueName("bad"), body: sample.listing(broker, { financials: { askingPrice: -5 } }) };
    const items = [...good.slice(0, 10), bad, ...good.slice(10)];
    const res = await listingBatch(partner.apiKey, items);
    expect(res.status).toBe(200);
    expect(res.body.counts).toEqual({ created: 20, updated: 0, unchanged: 0, failed: 1 });
    expect(res.body.results[10]).toEqual({
      externalListingId: bad.id,
      httpStatus: 400,
      changed: false,
      body: {
        status: "error",
        error: "financials.askingPrice: must be at least 0",
        details: [{ path: "financials.askingPrice", message: "must be at least 0" }],
      },
    });
    for (const g of good) expect((await partner.get(`/partner/v1/listings/${g.id}`)).status).toBe(200);
    expect((await partner.get(`/partner/v1/listings/${bad.id}`)).status).toBe(404);
    // The same batch again: every good item is an identical repeat, nothing is written.
    const before = await totals(partner.partnerId);
    const again = await listingBatch(partner.apiKey, items);
    expect(again.body.counts).toEqual({ created: 0, updated: 0, unchanged: 20, failed: 1 });
    expect(again.body.results[0]).toMatchObject({
      httpStatus: 200,
      changed: false,
      body: { message: "Listing updated" },
    });
    expect(await totals(partner.partnerId)).toEqual(before);
  });

  test("a malformed batch is refused whole and writes nothing", async () => {
    const partner = await api.createPartner();
    const broker = uniqueName("b");
    await partner.put(`/partner/v1/brokers/${broker}`, sample.broker());
    const before = await totals(partner.partnerId);
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      call(api.baseUrl, "POST", "/partner/v1/listings/batch", { key: partner.apiKey, body, headers });
    const id = uniqueName("l");

    const notJson = await post("{ items: [");
    expect(notJson.status).toBe(400);
    expect(notJson.body.status).toBe("error");
    const duplicate = await post({
      items: [
        { externalListingId: id, listing: sample.listing(broker) },
        { externalListingId: uniqueName("x"), listing: sample.listing(broker) },
        { externalListingId: id, listing: sample.listing(broker) },
      ],
    });
    expect(duplicate.status).toBe(400);
    expect(duplicate.body.details).toEqual([
      { path: "items[2].externalListingId", message: expect.stringContaining("repeats items[0].externalListingId") },
    ]);
    const tooMany = await post({
      items: Array.from({ length: BATCH_MAX_ITEMS + 1 }, (_, i) => ({
        externalListingId: `${id}-${i}`,
        listing: { status: "DRAFT" },
      })),
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toContain(`at most ${BATCH_MAX_ITEMS}`);
    expect((await post({ items: [] })).status).toBe(400);
    expect((await post({ items: [{ externalListingId: id }] })).status).toBe(400);
    expect((await post({ items: [{ externalListingId: id, listing: sample.listing(broker) }], extra: 1 })).status).toBe(
      400,
    );
    expect((await post([{ externalListingId: id, listing: sample.listing(broker) }])).status).toBe(400);
    const huge = await post({
      items: Array.from({ length: 400 }, (_, i) => ({
        externalListingId: `${id}-${i}`,
        listing: sample.listing(broker, { description: "x".repeat(4000) }),
      })),
    });
    expect(huge.status).toBe(413);
    expect(
      (
        await call(api.baseUrl, "POST", "/partner/v1/listings/batch?dryRun=maybe", {
          key: partner.apiKey,
          body: { items: [{ externalListingId: id, listing: sample.listing(broker) }] },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await call(api.baseUrl, "POST", "/partner/v1/listings/batch", {
          body: { items: [{ externalListingId: id, listing: sample.listing(broker) }] },
        })
      ).status,
    ).toBe(401);
    expect(await totals(partner.partnerId)).toEqual(before);
  });

  test("dryRun=true answers every item as the single dry run does, and writes nothing", async () => {
    const partner = await api.createPartner();
    const broker = uniqueName("b");
    await partner.put(`/partner/v1/brokers/${broker}`, sample.broker());
    const existing = uniqueName("existing");
    await partner.put(`/partner/v1/listings/${existing}`, sample.listing(broker));
    const items: Item[] = [
      { id: uniqueName("new"), body: sample.listing(broker) },
      { id: existing, body: { financials: { askingPrice: 1 } } },
      { id: existing + "-x", body: { status: "DRAFT" } },
      { id: uniqueName("nb"), body: sample.listing(uniqueName("nobody")) },
    ];
    const before = await totals(partner.partnerId);
    const dry = await listingBatch(partner.apiKey, items, "?dryRun=true");
    expect(dry.status).toBe(200);
    expect(dry.body.dryRun).toBe(true);
    expect(await totals(partner.partnerId)).toEqual(before);
    for (const [i, item] of items.entries()) {
      const one = await call(api.baseUrl, "PUT", `/partner/v1/listings/${item.id}?dryRun=true`, {
        key: partner.apiKey,
        body: item.body,
      });
      expect({ status: dry.body.results[i].httpStatus, body: dry.body.results[i].body }).toEqual({
        status: one.status,
        body: one.body,
      });
    }
    expect(dry.body.results.map((r: any) => r.body.outcome ?? r.httpStatus)).toEqual([
      "wouldCreate",
      "wouldUpdate",
      400,
      404,
    ]);
    expect(dry.body.counts).toEqual({ created: 1, updated: 1, unchanged: 0, failed: 2 });

    const brokerDry = await brokerBatch(
      partner.apiKey,
      [
        { id: broker, body: sample.broker({ phone: "+1 512 555 0199" }) },
        { id: uniqueName("nb"), body: { name: "x" } },
      ],
      "?dryRun=true",
    );
    expect(brokerDry.body.results.map((r: any) => [r.httpStatus, r.body.outcome ?? r.body.error])).toEqual([
      [200, "wouldUpdate"],
      [400, "email: is required"],
    ]);
    expect(await totals(partner.partnerId)).toEqual(before);
  });

  test("a test key writes test records: preview links, invisible to the live key", async () => {
    const partner = await api.createPartner({ test: true });
    const broker = uniqueName("b");
    const listing = uniqueName("l");
    const b = await brokerBatch(partner.test!.apiKey, [{ id: broker, body: sample.broker() }]);
    expect(b.body.results[0].httpStatus).toBe(201);
    const l = await listingBatch(partner.test!.apiKey, [{ id: listing, body: sample.listing(broker) }]);
    expect(l.body.results[0].httpStatus).toBe(201);
    expect(l.body.results[0].body.serviceListingUrl).toContain("/preview/");
    expect((await partner.test!.get(`/partner/v1/listings/${listing}`)).body.listing.mode).toBe("test");
    expect((await partner.get(`/partner/v1/listings/${listing}`)).status).toBe(404);
    // The live key's batch naming the test broker: that broker does not exist for it.
    const live = await listingBatch(partner.apiKey, [{ id: listing, body: sample.listing(broker) }]);
    expect(live.body.results[0]).toMatchObject({ httpStatus: 404, body: { error: "Broker not found" } });
  });
});

test("a batch racing single PUTs of the same IDs: each ID created once, every write kept in order", async () => {
  const partner = await api.createPartner();
  const broker = uniqueName("b");
  await partner.put(`/partner/v1/brokers/${broker}`, sample.broker());
  const ids = Array.from({ length: 60 }, () => uniqueName("race"));
  const [batch, ...singles] = await Promise.all([
    listingBatch(
      partner.apiKey,
      ids.map((id) => ({ id, body: sample.listing(broker, { title: "from the batch" }) })),
    ),
    ...ids.map((id) =>
      partner.put(`/partner/v1/listings/${id}`, sample.listing(broker, { title: "from a single PUT" })),
    ),
  ]);
  expect(batch.status).toBe(200);
  for (const [i, id] of ids.entries()) {
    const statuses = [batch.body.results[i].httpStatus, singles[i]!.status].sort();
    expect({ id, statuses }).toEqual({ id, statuses: [200, 201] });
  }
  const rows = await api.sql`
    SELECT l.version, (SELECT count(*)::int FROM listing_history h WHERE h.listing_id = l.id) AS history,
      (SELECT count(*)::int FROM outbox o WHERE o.topic = 'pss.listing-events.v1' AND o.message_key = l.id::text) AS events
    FROM listings l WHERE l.partner_id = ${partner.partnerId}`;
  expect(rows).toHaveLength(ids.length);
  for (const r of rows) {
    expect(r.version).toBe(2);
    expect(r.history).toBe(2);
    expect(r.events).toBe(2);
  }
});

describe("rate limiting counts every item", () => {
  let limited: ApiHarness;
  beforeAll(async () => {
    limited = await startApi({ relay: false, rateLimitPerMinute: 5 });
    // The limiter fails open until Redis is ready: wait for the connection, or the first batch may pass whole.
    await limited.redis.ping();
  });
  afterAll(() => limited?.stop());

  test("items past the key's budget are answered 429; the first ones go ahead", async () => {
    const partner = await limited.createPartner();
    await withinOneRateWindow(60, 10);
    const items = Array.from({ length: 8 }, () => ({ externalBrokerId: uniqueName("b"), broker: sample.broker() }));
    const res = await call(limited.baseUrl, "POST", "/partner/v1/brokers/batch", {
      key: partner.apiKey,
      body: { items },
    });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: any) => r.httpStatus)).toEqual([201, 201, 201, 201, 201, 429, 429, 429]);
    expect(res.body.results[7].body).toEqual({ status: "error", error: "Too many requests" });
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    // The budget is spent: the next request is refused whole, as a single PUT would be.
    expect(
      (
        await call(limited.baseUrl, "POST", "/partner/v1/brokers/batch", {
          key: partner.apiKey,
          body: { items: items.slice(0, 1) },
        })
      ).status,
    ).toBe(429);
  });
});
