// The change feed against the real API and PostgreSQL: what each kind of write puts in it, the key's scope
// (partner and mode, lead.received only with lead tracking), and the core promise under concurrency: writers
// (single PUTs, batches, and a transaction that stays open while others commit) and a reader following
// nextCursor the whole time; the reader must see every committed change exactly once, numbers consecutive and
// never going backwards, the late transaction included. Two audiences (keys with and without lead tracking), each
// numbered without holes; retention racing a reader; retention in bounded chunks.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";

import { leadSubmittedPayload } from "@pss/contracts";
import { uniqueName } from "../../../test/support/env.ts";
import { recordLeads } from "../../leads/src/counting/count-recorder.ts";
import { createPartnerAdmin } from "../src/admin/partner-admin.ts";
import { upsertBroker } from "../src/brokers/broker-service.ts";
import { createFeedSequencer, pruneFeedChunk, silentLogger, type FeedSequencer } from "@pss/service-kit";
import { call, sample, startApi, type ApiHarness, type TestResponse } from "./support/harness.ts";
import { untilWaitingOnLock } from "./support/lock-waits.ts";

let api: ApiHarness;
let sequencer: FeedSequencer;

beforeAll(async () => {
  api = await startApi({ relay: false });
  sequencer = createFeedSequencer({ sql: api.sql, logger: silentLogger }, { retentionDays: 35, idlePollMs: 20 });
  sequencer.start();
});
afterAll(async () => {
  await sequencer?.stop();
  await api?.stop();
});

const events = (key: string, after?: string | number, limit = 1000) =>
  call(api.baseUrl, "GET", `/partner/v1/events?limit=${limit}${after !== undefined ? `&after=${after}` : ""}`, { key });

/** Reads the feed until `until` holds (the sequencer numbers within a moment of the commit). */
async function readUntil(key: string, until: (all: any[]) => boolean, after = 0): Promise<any[]> {
  const all: any[] = [];
  let cursor = String(after);
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const page = await events(key, cursor);
    expect(page.status).toBe(200);
    all.push(...page.body.results);
    cursor = page.body.nextCursor;
    if (until(all)) return all;
    if (page.body.results.length === 0) await Bun.sleep(30);
  }
  throw new Error(`feed did not reach the expected state; got ${JSON.stringify(all.map((e) => e.type))}`);
}

describe("what the feed carries", () => {
  test("creates, updates with their changed paths, status moves; an identical repeat adds nothing; numbers start at 1, consecutive", async () => {
    const partner = await api.createPartner();
    const broker = uniqueName("b");
    const listing = uniqueName("l");
    expect((await partner.put(`/partner/v1/brokers/${broker}`, sample.broker())).status).toBe(201);
    expect(
      (await partner.put(`/partner/v1/listings/${listing}`, sample.listing(broker, { status: "DRAFT" }))).status,
    ).toBe(201);
    expect(
      (await partner.put(`/partner/v1/listings/${listing}`, { status: "FOR_SALE", financials: { askingPrice: 1 } }))
        .status,
    ).toBe(200);
    expect(
      (await partner.put(`/partner/v1/listings/${listing}`, { status: "FOR_SALE", financials: { askingPrice: 1 } }))
        .status,
    ).toBe(200);
    expect(
      (await partner.put(`/partner/v1/brokers/${broker}`, sample.broker({ phone: "+1 512 555 0111" }))).status,
    ).toBe(200);
    const all = await readUntil(partner.apiKey, (a) => a.length >= 5);
    expect(all.map((e) => [e.sequence, e.type, e.version])).toEqual([
      [1, "broker.created", 1],
      [2, "listing.created", 1],
      [3, "listing.updated", 2],
      [4, "listing.status_changed", 2],
      [5, "broker.updated", 2],
    ]);
    expect(all[2].data).toMatchObject({
      externalListingId: listing,
      changedPaths: ["financials.askingPrice", "status"],
    });
    expect(all[3].data).toMatchObject({ externalListingId: listing, from: "DRAFT", to: "FOR_SALE" });
    expect(all[4].data).toEqual({
      externalBrokerId: broker,
      serviceBrokerId: expect.any(String),
      changedPaths: ["phone"],
    });
    // Nothing after the last: the cursor stays.
    await Bun.sleep(200);
    const tail = await events(partner.apiKey, 5);
    expect(tail.body).toEqual({ status: "success", results: [], nextCursor: "5" });
  });

  test("each key reads its own partner and mode; lead.received only with lead tracking; bad cursors are refused", async () => {
    const tracked = await api.createPartner({ leadTracking: true, test: true });
    const untracked = await api.createPartner({ leadTracking: false });
    const broker = uniqueName("b");
    await tracked.test!.put(`/partner/v1/brokers/${broker}`, sample.broker());
    await untracked.put(`/partner/v1/brokers/${broker}`, sample.broker());
    // A lead.received fact as the leads service writes it (in its own transaction with the count).
    for (const p of [tracked, untracked]) {
      const mode = p === tracked ? "test" : "live";
      await api.sql`
        INSERT INTO outbox (topic, message_key, payload) VALUES ('pss.partner-events.v1', 'office:1', ${api.sql.json({
          eventId: crypto.randomUUID(),
          type: "lead.received",
          aggregateType: "office",
          aggregateId: "1",
          version: 1,
          partnerId: p.partnerId,
          mode,
          occurredAt: new Date().toISOString(),
          payload: { externalListingId: "x", serviceListingId: 1, officeId: 1, officeLeadCount: 1, version: 1 },
        } as never)})`;
    }
    const testEvents = await readUntil(tracked.test!.apiKey, (a) => a.length >= 2);
    expect(testEvents.map((e) => [e.sequence, e.type])).toEqual([
      [1, "broker.created"],
      [2, "lead.received"],
    ]);
    // The live key of the same partner: its live records only (none).
    await Bun.sleep(200);
    expect((await events(tracked.apiKey)).body.results).toEqual([]);
    // Without lead tracking the lead's number is left out.
    const other = await readUntil(untracked.apiKey, (a) => a.length >= 1);
    await Bun.sleep(200);
    expect((await events(untracked.apiKey)).body.results.map((e: any) => [e.sequence, e.type])).toEqual([
      [1, "broker.created"],
    ]);
    expect(other[0].data.externalBrokerId).toBe(broker);

    for (const bad of ["-1", "abc", "1.5", "01"]) expect((await events(untracked.apiKey, bad)).status).toBe(400);
    expect((await call(api.baseUrl, "GET", "/partner/v1/events?limit=1001", { key: untracked.apiKey })).status).toBe(
      400,
    );
    expect((await call(api.baseUrl, "GET", "/partner/v1/events", {})).status).toBe(401);
  });

  test("two keys of one partner: the one without lead tracking reads 1..n with no hole where a lead was, the one with it reads the leads, also without holes", async () => {
    const partner = await api.createPartner({ leadTracking: true });
    const keyA = partner.apiKey;
    const keyB = (
      await createPartnerAdmin({ sql: api.sql, redis: api.redis }).createKey({
        partnerId: partner.partnerId,
        leadTracking: false,
      })
    ).apiKey;
    const broker = uniqueName("b");
    const listing = uniqueName("l");
    expect((await partner.put(`/partner/v1/brokers/${broker}`, sample.broker())).status).toBe(201);
    const created = await partner.put(`/partner/v1/listings/${listing}`, sample.listing(broker));
    expect(created.status).toBe(201);
    // A buyer sends three inquiries; the leads service counts them (its own code, which writes lead.received with
    // the office's count in the same transaction).
    for (let i = 0; i < 3; i++) {
      const res = await call(api.marketplaceUrl, "POST", `/v1/listings/${created.body.serviceListingId}/leads`, {
        body: { name: "Ann Buyer", email: `ann.buyer-${i}@example.com`, message: "Is the lease renewable?" },
      });
      expect(res.status).toBe(202);
    }
    const leads = await api.sql`
      SELECT id::text AS lead_id, listing_id, broker_id::text AS broker_id, office_id, organization_id, created_at
      FROM leads WHERE listing_id = ${created.body.serviceListingId} ORDER BY created_at, id`;
    expect(leads).toHaveLength(3);
    expect(
      await recordLeads(
        api.sql,
        leads.map((l) =>
          leadSubmittedPayload({
            leadId: l.lead_id,
            listingId: l.listing_id,
            brokerId: l.broker_id,
            officeId: l.office_id,
            organizationId: l.organization_id,
            createdAt: l.created_at,
          }),
        ),
      ),
    ).toBe(3);
    await readUntil(keyA, (a) => a.length >= 5);
    // B changes the listing twice.
    for (const change of [{ status: "UNDER_CONTRACT" }, { financials: { askingPrice: 2 } }])
      expect(
        (await call(api.baseUrl, "PUT", `/partner/v1/listings/${listing}`, { key: keyB, body: change })).status,
      ).toBe(200);
    const seenA = await readUntil(keyA, (a) => a.length >= 8);
    const seenB = await readUntil(keyB, (a) => a.length >= 5);
    await Bun.sleep(200);
    expect((await events(keyB, seenB.at(-1)!.sequence)).body.results).toEqual([]);
    expect((await events(keyA, seenA.at(-1)!.sequence)).body.results).toEqual([]);
    // B: consecutive from 1, no lead event, so nothing to count leads by.
    expect(seenB.map((e) => [e.sequence, e.type])).toEqual([
      [1, "broker.created"],
      [2, "listing.created"],
      [3, "listing.updated"],
      [4, "listing.status_changed"],
      [5, "listing.updated"],
    ]);
    // A: the same events and the three leads, consecutive too.
    expect(seenA.map((e) => [e.sequence, e.type])).toEqual([
      [1, "broker.created"],
      [2, "listing.created"],
      [3, "lead.received"],
      [4, "lead.received"],
      [5, "lead.received"],
      [6, "listing.updated"],
      [7, "listing.status_changed"],
      [8, "listing.updated"],
    ]);
    // lead.received's version is the office's lead count, as the feed contract says.
    const leadEvents = seenA.filter((e) => e.type === "lead.received");
    for (const e of leadEvents) expect(e.version).toBe(e.data.officeLeadCount);
    expect(leadEvents.map((e) => e.version - leadEvents[0].version)).toEqual([0, 1, 2]);
    // A reader without lead tracking pages in its own numbering.
    expect((await events(keyB, 3)).body.results.map((e: any) => e.sequence)).toEqual([4, 5]);
    expect((await events(keyB, 3)).body.nextCursor).toBe("5");
  });

  test("an event numbered by the previous release's sequencer (a rolling deploy) still gets the next number of the records audience", async () => {
    const partner = await api.createPartner({ leadTracking: false });
    await partner.put(`/partner/v1/brokers/${uniqueName("b")}`, sample.broker());
    await readUntil(partner.apiKey, (a) => a.length >= 1);
    // As that sequencer wrote it: the head's last_seq raised, the event inserted without record_seq.
    await api.sql.begin(async (tx) => {
      const [head] = await tx`
        UPDATE partner_feed_heads SET last_seq = last_seq + 1
        WHERE partner_id = ${partner.partnerId} AND mode = 'live' RETURNING last_seq`;
      await tx`
        INSERT INTO partner_feed (partner_id, mode, seq, type, event_id, record_type, version, data, occurred_at)
        VALUES (${partner.partnerId}, 'live', ${head!.last_seq}, 'broker.updated', ${crypto.randomUUID()}, 'broker', 2,
          ${api.sql.json({ externalBrokerId: "old-release", serviceBrokerId: "1", changedPaths: ["phone"] })}, now())`;
    });
    await partner.put(`/partner/v1/brokers/${uniqueName("b")}`, sample.broker());
    const all = await readUntil(partner.apiKey, (a) => a.length >= 3);
    expect(all.map((e) => [e.sequence, e.type])).toEqual([
      [1, "broker.created"],
      [2, "broker.updated"],
      [3, "broker.created"],
    ]);
  });

  test("a test key's simulated leads carry the office's test lead count as their version", async () => {
    const partner = await api.createPartner({ leadTracking: true, test: true });
    const broker = uniqueName("b");
    const listing = uniqueName("l");
    expect((await partner.test!.put(`/partner/v1/brokers/${broker}`, sample.broker())).status).toBe(201);
    expect((await partner.test!.put(`/partner/v1/listings/${listing}`, sample.listing(broker))).status).toBe(201);
    for (let i = 0; i < 2; i++)
      expect(
        (
          await call(api.baseUrl, "POST", `/partner/v1/test/listings/${listing}/leads`, {
            key: partner.test!.apiKey,
            body: {},
          })
        ).status,
      ).toBe(202);
    const all = await readUntil(partner.test!.apiKey, (a) => a.filter((e) => e.type === "lead.received").length >= 2);
    const leadEvents = all.filter((e) => e.type === "lead.received");
    expect(leadEvents.map((e) => [e.version, e.data.officeLeadCount])).toEqual([
      [leadEvents[0].data.officeLeadCount, leadEvents[0].data.officeLeadCount],
      [leadEvents[0].data.officeLeadCount + 1, leadEvents[0].data.officeLeadCount + 1],
    ]);
  });

  test("a cursor older than the retention is answered 410, naming where to follow from", async () => {
    const partner = await api.createPartner();
    await partner.put(`/partner/v1/brokers/${uniqueName("b")}`, sample.broker());
    await partner.put(`/partner/v1/brokers/${uniqueName("b")}`, sample.broker());
    await readUntil(partner.apiKey, (a) => a.length >= 2);
    // Age the first event past the retention, then prune.
    await api.sql`UPDATE partner_feed SET sequenced_at = now() - interval '40 days' WHERE partner_id = ${partner.partnerId} AND seq = 1`;
    expect(await sequencer.prune()).toBeGreaterThanOrEqual(1);
    const gone = await events(partner.apiKey, 0);
    expect(gone.status).toBe(410);
    expect(gone.body.error).toContain("after=1");
    expect((await events(partner.apiKey, 1)).body.results.map((e: any) => e.sequence)).toEqual([2]);
  });

  test("retention that commits while a page is being read: the reader gets 410, never a page that starts after the removed events", async () => {
    const partner = await api.createPartner();
    for (let i = 0; i < 3; i++) await partner.put(`/partner/v1/brokers/${uniqueName("b")}`, sample.broker());
    await readUntil(partner.apiKey, (a) => a.length >= 3);
    await api.sql`UPDATE partner_feed SET sequenced_at = now() - interval '40 days' WHERE partner_id = ${partner.partnerId} AND seq <= 2`;
    let answer: Promise<TestResponse> | undefined;
    await api.sql.begin(async (tx) => {
      // Every read of partner_feed waits for this lock: the request below is held at its page read, after
      // anything it read before it...
      await tx`LOCK TABLE partner_feed IN ACCESS EXCLUSIVE MODE`;
      answer = events(partner.apiKey, 0);
      await untilWaitingOnLock(api.sql, "json_build_object('sequence'", "the feed request to reach its page read");
      // ...while retention removes the two oldest events (the chunk the retention loop runs) and commits.
      expect(await pruneFeedChunk(tx, { retentionDays: 35, chunkSize: 1000 })).toBeGreaterThanOrEqual(2);
    });
    const res = await answer!;
    expect(res.status).toBe(410);
    expect(res.body.error).toContain("after=2");
    expect((await events(partner.apiKey, 2)).body.results.map((e: any) => e.sequence)).toEqual([3]);
  });

  test("retention removes a backlog in chunks of their own transactions, raising where each audience's 410 starts", async () => {
    const partner = await api.createPartner({ leadTracking: true });
    const keyB = (
      await createPartnerAdmin({ sql: api.sql, redis: api.redis }).createKey({
        partnerId: partner.partnerId,
        leadTracking: false,
      })
    ).apiKey;
    await partner.put(`/partner/v1/brokers/${uniqueName("b")}`, sample.broker());
    await readUntil(partner.apiKey, (a) => a.length >= 1);
    await api.sql`
      INSERT INTO outbox (topic, message_key, payload) VALUES ('pss.partner-events.v1', 'lead:1', ${api.sql.json({
        eventId: crypto.randomUUID(),
        type: "lead.received",
        aggregateType: "lead",
        aggregateId: crypto.randomUUID(),
        version: 1,
        partnerId: partner.partnerId,
        mode: "live",
        occurredAt: new Date().toISOString(),
        payload: { externalListingId: "x", serviceListingId: 1, officeId: 1, officeLeadCount: 1, version: 1 },
      } as never)})`;
    await readUntil(partner.apiKey, (a) => a.length >= 2);
    for (let i = 0; i < 3; i++) await partner.put(`/partner/v1/brokers/${uniqueName("b")}`, sample.broker());
    await readUntil(partner.apiKey, (a) => a.length >= 5);
    // A: 1 broker, 2 lead, 3-5 brokers. B: 1-4 brokers. The four oldest expire, oldest first.
    await api.sql`
      UPDATE partner_feed SET sequenced_at = now() - interval '40 days' - (10 - seq) * interval '1 second'
      WHERE partner_id = ${partner.partnerId} AND seq <= 4`;
    const gone = async (key: string) => {
      const res = await events(key, 0);
      return res.status === 410 ? (res.body.error as string).match(/after=(\d+)/)![1] : res.status;
    };
    const chunk = () => api.sql.begin((tx) => pruneFeedChunk(tx, { retentionDays: 35, chunkSize: 2 }));
    expect(await chunk()).toBe(2);
    expect([await gone(partner.apiKey), await gone(keyB)]).toEqual(["2", "1"]);
    expect((await events(keyB, 1)).body.results.map((e: any) => e.sequence)).toEqual([2, 3, 4]);
    expect(await chunk()).toBe(2);
    expect([await gone(partner.apiKey), await gone(keyB)]).toEqual(["4", "3"]);
    expect((await events(partner.apiKey, 4)).body.results.map((e: any) => e.sequence)).toEqual([5]);
    expect((await events(keyB, 3)).body.results.map((e: any) => e.sequence)).toEqual([4]);
    expect(await chunk()).toBe(0);
    // The sequencer's prune does the same a chunk at a time until nothing is left.
    await api.sql`UPDATE partner_feed SET sequenced_at = now() - interval '40 days' WHERE partner_id = ${partner.partnerId}`;
    const small = createFeedSequencer({ sql: api.sql, logger: silentLogger }, { retentionDays: 35, pruneChunkSize: 1 });
    expect(await small.prune()).toBe(1);
    expect([await gone(partner.apiKey), await gone(keyB)]).toEqual(["5", "4"]);
  });
});

test("concurrent writers and a reader paging while they commit: every change exactly once, in order, the late commit included", async () => {
  const partner = await api.createPartner();
  const broker = uniqueName("b");
  await partner.put(`/partner/v1/brokers/${broker}`, sample.broker());
  const lateBroker = uniqueName("late");

  const seen: any[] = [];
  let cursor = "0";
  let stop = false;
  const reader = (async () => {
    while (!stop) {
      const page = await events(partner.apiKey, cursor, 37);
      expect(page.status).toBe(200);
      for (const e of page.body.results) {
        // Never backwards, never a gap: each number is the one after the last.
        expect(e.sequence).toBe(seen.length + 1);
        seen.push(e);
      }
      cursor = page.body.nextCursor;
      if (page.body.results.length === 0) await Bun.sleep(5);
    }
  })();

  // A transaction that writes a broker and stays open while everything below commits and is read: it commits when
  // told, however long the writes take on a busy machine (a fixed pause could end before them).
  let lateCommitted = false;
  const { promise: writesDone, resolve: commitLate } = Promise.withResolvers<void>();
  const late = api.sql
    .begin(async (tx) => {
      await upsertBroker(tx, { partnerId: partner.partnerId, mode: "live" }, lateBroker, sample.broker(), {
        origin: { keyId: null, requestId: "late" },
      });
      await writesDone;
    })
    .then(() => (lateCommitted = true));

  const ids = Array.from({ length: 120 }, (_, i) => `${uniqueName("c")}-${i}`);
  let beforeLate: number;
  try {
    const singles = ids.slice(0, 40).map((id) => partner.put(`/partner/v1/listings/${id}`, sample.listing(broker)));
    const batches = [ids.slice(40, 80), ids.slice(80, 120)].map((chunk) =>
      call(api.baseUrl, "POST", "/partner/v1/listings/batch", {
        key: partner.apiKey,
        body: { items: chunk.map((id) => ({ externalListingId: id, listing: sample.listing(broker) })) },
      }),
    );
    const answers = await Promise.all([...singles, ...batches]);
    expect(answers.every((a) => a.status === 201 || a.status === 200)).toBe(true);
    // Updates of the same listings while the late transaction is still open.
    await Promise.all(
      ids.slice(0, 60).map((id) => partner.put(`/partner/v1/listings/${id}`, { status: "UNDER_CONTRACT" })),
    );
    // The reader has read past (most of) these before the late transaction commits.
    const readDeadline = Date.now() + 15_000;
    while (seen.length === 0 && Date.now() < readDeadline) await Bun.sleep(20);
    beforeLate = seen.length;
    expect(lateCommitted).toBe(false);
  } finally {
    commitLate();
  }
  await late;

  const expected = 1 + 120 + 60 * 2 + 1; // broker, creates, updates with their status moves, the late broker
  const deadline = Date.now() + 15_000;
  while (seen.length < expected && Date.now() < deadline) await Bun.sleep(20);
  stop = true;
  await reader;
  expect(seen.length).toBe(expected);
  expect(beforeLate).toBeGreaterThan(0);
  // The late broker's event came after events that committed earlier, not lost behind them.
  const lateEvent = seen.find((e) => e.type === "broker.created" && e.data.externalBrokerId === lateBroker);
  expect(lateEvent).toBeDefined();
  expect(lateEvent.sequence).toBeGreaterThan(beforeLate);
  // Every listing: created (version 1) before updated (version 2) before its status move, exactly once each.
  for (const id of ids) {
    const mine = seen.filter((e) => e.data.externalListingId === id).map((e) => `${e.type}@${e.version}`);
    expect(mine).toEqual(
      ids.indexOf(id) < 60
        ? ["listing.created@1", "listing.updated@2", "listing.status_changed@2"]
        : ["listing.created@1"],
    );
  }
  // The feed agrees with the database: one event per stored version (and one per status move).
  const [row] =
    await api.sql`SELECT sum(version)::int AS versions FROM listings WHERE partner_id = ${partner.partnerId}`;
  expect(seen.filter((e) => e.type === "listing.created" || e.type === "listing.updated")).toHaveLength(row!.versions);
});
