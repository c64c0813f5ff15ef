// Group commit of single listing PUTs (listing-write-groups.ts) against the real PostgreSQL: PUTs that arrive while
// another is being written are written together, one commit for the group, and each gets exactly the answer and the
// rows its PUT alone would have had: its own change history (key and request), its own event (request ID and
// traceparent), its own status history; a refused item is refused alone; two PUTs of one listing are never in one
// group. One write slot (concurrency 1) makes the grouping deterministic: the first PUT takes the slot, the ones
// started while it is written queue and go together.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import type { ListingBody } from "@pss/contracts";
import { testUrls, uniqueName } from "../../../test/support/env.ts";
import { createListingWriteGroups, type ListingWriteGroups } from "../src/listings/listing-write-groups.ts";
import type { RecordScope, WriteSource } from "../src/records/record-scope.ts";
import { sample, startApi, type ApiHarness, type Partner } from "./support/harness.ts";

let api: ApiHarness;
let partner: Partner;
let scope: RecordScope;
let groups: ListingWriteGroups;
const sizes: number[] = [];
const broker = uniqueName("group-broker");
/** Another connection: what it sees was committed. */
const observer = postgres(testUrls().DATABASE_URL, { max: 1, onnotice: () => {} });

beforeAll(async () => {
  api = await startApi({ relay: false });
  partner = await api.createPartner();
  scope = { partnerId: partner.partnerId, mode: "live" };
  expect((await partner.put(`/partner/v1/brokers/${broker}`, sample.broker())).status).toBe(201);
  groups = createListingWriteGroups({ sql: api.sql, stats: { onGroup: (n) => sizes.push(n) } }, { concurrency: 1 });
});
afterAll(async () => {
  await observer.end();
  await api?.stop();
});

let requests = 0;
/** A PUT's source as the route builds it: the key, and a request ID and traceparent of its own. */
function source(): WriteSource {
  const requestId = `req-${++requests}-${uniqueName("g")}`;
  const traceparent = `00-${crypto.randomUUID().replaceAll("-", "")}-${"a".repeat(16)}-01`;
  return { origin: { keyId: partner.keyId, requestId }, trace: { requestId, traceparent } };
}

/** Starts PUTs in this order within one tick: the first takes the write slot, the others queue behind it. */
function putAll(items: { id: string; body: ListingBody; source?: WriteSource }[]) {
  sizes.length = 0;
  return items.map((item) => {
    const s = item.source ?? source();
    return { ...item, source: s, result: groups.upsert(scope, item.id, item.body, s) };
  });
}

const body = (overrides: Record<string, unknown> = {}) => sample.listing(broker, overrides) as unknown as ListingBody;

describe("single PUTs written together", () => {
  test("creates queued behind a write go in one group, each with its own answer, history and event", async () => {
    const ids = Array.from({ length: 5 }, () => uniqueName("grouped"));
    const puts = putAll(ids.map((id, i) => ({ id, body: body({ title: `Listing ${i}` }) })));
    const results = await Promise.all(puts.map((p) => p.result));
    expect(sizes).toEqual([1, 4]);
    expect(results.map((r) => [r.created, r.changed])).toEqual(ids.map(() => [true, true]));
    expect(new Set(results.map((r) => r.listingId)).size).toBe(5);
    // The answer's warnings are those of a PUT alone: the same body written alone answers the same.
    const alone = await groups.upsert(scope, uniqueName("alone"), body({ title: "Listing 0" }), source());
    for (const r of results) expect(r.quality).toEqual(alone.quality);

    for (const [k, p] of puts.entries()) {
      const [row] = await observer`
        SELECT l.id::text AS id, l.title, l.version, h.key_id::text AS key_id, h.request_id,
               (SELECT count(*)::int FROM listing_photos ph WHERE ph.listing_id = l.id) AS photos,
               (SELECT count(*)::int FROM listing_status_history sh WHERE sh.listing_id = l.id) AS statuses
        FROM listings l JOIN listing_history h ON h.listing_id = l.id
        WHERE l.partner_id = ${scope.partnerId} AND l.mode = 'live' AND l.external_id = ${p.id}`;
      expect(row).toEqual({
        id: String(results[k]!.listingId),
        title: `Listing ${k}`,
        version: 1,
        key_id: partner.keyId,
        request_id: p.source.origin.requestId,
        photos: 2,
        statuses: 1,
      });
      const events = await observer`
        SELECT request_id, traceparent, payload->>'version' AS version FROM outbox WHERE message_key = ${String(results[k]!.listingId)}`;
      expect([...events]).toEqual([
        { request_id: p.source.trace!.requestId, traceparent: p.source.trace!.traceparent, version: "1" },
      ]);
      const [draft] = await observer`
        SELECT count(*)::int AS n FROM feed_drafts d JOIN outbox o ON o.id = d.outbox_id
        WHERE o.message_key = ${String(results[k]!.listingId)} AND d.type = 'listing.created'`;
      expect(draft!.n).toBe(1);
    }
  });

  test("updates, a status move and an identical repeat in one group: each changes what its PUT alone would", async () => {
    const ids = Array.from({ length: 4 }, () => uniqueName("upd"));
    for (const id of ids) await groups.upsert(scope, id, body(), source());
    const puts = putAll([
      { id: uniqueName("first"), body: body() },
      { id: ids[0]!, body: body({ title: "New title" }) },
      { id: ids[1]!, body: body({ status: "UNDER_CONTRACT" }) },
      { id: ids[2]!, body: body() },
      { id: ids[3]!, body: body({ photos: [{ url: "https://images.example.com/other.jpg", sortKey: 1 }] }) },
    ]);
    const results = await Promise.all(puts.map((p) => p.result));
    expect(sizes).toEqual([1, 4]);
    expect(results.slice(1).map((r) => [r.created, r.changed])).toEqual([
      [false, true],
      [false, true],
      [false, false],
      [false, true],
    ]);
    const rows = await observer`
      SELECT l.external_id, l.version, l.title, l.status,
             (SELECT array_agg(url ORDER BY sort_key) FROM listing_photos p WHERE p.listing_id = l.id) AS photos,
             (SELECT count(*)::int FROM listing_status_history h WHERE h.listing_id = l.id) AS statuses,
             (SELECT request_id FROM listing_history h WHERE h.listing_id = l.id ORDER BY version DESC LIMIT 1) AS last_request
      FROM listings l WHERE l.partner_id = ${scope.partnerId} AND l.external_id = ANY(${ids})`;
    const by = new Map(rows.map((r) => [r.external_id as string, r]));
    expect(by.get(ids[0]!)).toMatchObject({
      version: 2,
      title: "New title",
      last_request: puts[1]!.source.origin.requestId,
    });
    expect(by.get(ids[1]!)).toMatchObject({ version: 2, status: "UNDER_CONTRACT", statuses: 2 });
    expect(by.get(ids[2]!)).toMatchObject({ version: 1, statuses: 1 });
    expect(by.get(ids[3]!)).toMatchObject({ version: 2, photos: ["https://images.example.com/other.jpg"] });
    // The identical repeat wrote no event; the three changes one each, carrying their own requests' IDs.
    const events = await observer`
      SELECT o.request_id FROM outbox o JOIN listings l ON o.message_key = l.id::text
      WHERE l.external_id = ANY(${ids}) AND o.payload->>'version' = '2' ORDER BY o.id`;
    expect(events.map((e) => e.request_id).sort()).toEqual(
      [puts[1], puts[2], puts[4]].map((p) => p!.source.trace!.requestId).sort(),
    );
  });

  test("two PUTs of one listing never share a group; both are applied", async () => {
    const id = uniqueName("twice");
    const puts = putAll([
      { id: uniqueName("first"), body: body() },
      { id, body: body({ title: "one" }) },
      { id: uniqueName("other"), body: body() },
      { id, body: body({ title: "two" }) },
    ]);
    const results = await Promise.all(puts.map((p) => p.result));
    // The first alone, then every distinct listing queued (the second PUT of `id` waits), then that one.
    expect(sizes).toEqual([1, 2, 1]);
    expect(results[1]!.created).toBe(true);
    expect(results[3]).toMatchObject({ created: false, changed: true, listingId: results[1]!.listingId });
    const [row] =
      await observer`SELECT title, version FROM listings WHERE partner_id = ${scope.partnerId} AND external_id = ${id}`;
    expect(row).toEqual({ title: "two", version: 2 });
  });

  test("an item refused in a group is refused alone, with the error its PUT alone gets; the others are written", async () => {
    const puts = putAll([
      { id: uniqueName("first"), body: body() },
      { id: uniqueName("ok"), body: body() },
      { id: uniqueName("nobroker"), body: body({ brokerExternalId: uniqueName("missing") }) },
      {
        id: uniqueName("incomplete"),
        body: { brokerExternalId: broker, title: "no status, no location" } as ListingBody,
      },
      { id: uniqueName("ok"), body: body() },
    ]);
    const settled = await Promise.allSettled(puts.map((p) => p.result));
    expect(sizes).toEqual([1, 4]);
    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "fulfilled", "rejected", "rejected", "fulfilled"]);
    const alone = await Promise.allSettled([
      groups.upsert(scope, uniqueName("nobroker"), puts[2]!.body, source()),
      groups.upsert(scope, uniqueName("incomplete"), puts[3]!.body, source()),
    ]);
    for (const [k, s] of [settled[2], settled[3]].entries()) {
      const grouped = (s as PromiseRejectedResult).reason;
      const single = (alone[k] as PromiseRejectedResult).reason;
      expect({ name: grouped.constructor.name, status: grouped.status, message: grouped.message }).toEqual({
        name: single.constructor.name,
        status: single.status,
        message: single.message,
      });
    }
  });

  test("a PUT is answered once its write is committed: another connection sees it", async () => {
    const ids = [uniqueName("first"), uniqueName("seen"), uniqueName("seen")];
    const puts = putAll(ids.map((id) => ({ id, body: body() })));
    const seen = await Promise.all(
      puts.map(async (p) => {
        await p.result;
        const [row] =
          await observer`SELECT count(*)::int AS n FROM listings WHERE partner_id = ${scope.partnerId} AND external_id = ${p.id}`;
        return row!.n;
      }),
    );
    expect(sizes).toEqual([1, 2]);
    expect(seen).toEqual([1, 1, 1]);
  });
});
