// Feed drafts (migration 0033) against the real API and PostgreSQL: a write stores its feed events beside its
// outbox row in the same transaction; the sequencer numbers drafts in one set-based pass, consecutively per
// partner and mode in both audiences; a row a previous release's writer left with feed_pending true is numbered
// too, in outbox order among the drafts. No sequencer runs in the background here: each test runs the passes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BrokerUpserted, brokerUpsertedPayload, LeadReceived, leadReceivedFact } from "@pss/contracts";
import {
  createFeedSequencer,
  insertOutboxFacts,
  partnerFactRow,
  silentLogger,
  type FeedSequencer,
  appendEvents,
  outboxRow,
} from "@pss/service-kit";
import { uniqueName } from "../../../test/support/env.ts";
import { upsertBroker } from "../src/brokers/broker-service.ts";
import { sample, startApi, type ApiHarness } from "./support/harness.ts";

let api: ApiHarness;
let sequencer: FeedSequencer;

beforeAll(async () => {
  api = await startApi({ relay: false });
  sequencer = createFeedSequencer({ sql: api.sql, logger: silentLogger }, { retentionDays: 35 });
});
afterAll(async () => {
  await api?.stop();
});

/** Runs passes until one finds nothing. */
async function drain(): Promise<void> {
  while ((await sequencer.runOnce()) > 0);
}

const draftsOf = (partnerId: string) =>
  api.sql<
    {
      outbox_id: string;
      ordinal: number;
      type: string;
      mode: string;
      feed_pending: boolean | null;
      same_event: boolean;
    }[]
  >`
    SELECT d.outbox_id::text, d.ordinal, d.type, d.mode, o.feed_pending, d.event_id::text = o.payload->>'eventId' AS same_event
    FROM feed_drafts d LEFT JOIN outbox o ON o.id = d.outbox_id
    WHERE d.partner_id = ${partnerId}::uuid ORDER BY d.outbox_id, d.ordinal`;

const feedOf = (partnerId: string) =>
  api.sql<{ mode: string; seq: number; record_seq: number | null; type: string }[]>`
    SELECT mode, seq::int, record_seq::int, type FROM partner_feed WHERE partner_id = ${partnerId}::uuid ORDER BY mode, seq`;

/** A lead.received fact as the leads service writes it (insertOutboxFacts), for an invented lead. */
function leadFact(partnerId: string, mode: "live" | "test", count: number) {
  return partnerFactRow(
    LeadReceived,
    { aggregateId: crypto.randomUUID(), version: count, partnerId, mode },
    leadReceivedFact({ id: "1", external_id: "l" } as never, { id: "1", external_id: "b" } as never, {
      officeId: 1,
      officeLeadCount: count,
    }),
  );
}

describe("feed drafts", () => {
  test("a write stores its drafts with its outbox row (feed_pending NULL); a rolled-back write leaves neither", async () => {
    await drain();
    const partner = await api.createPartner();
    const broker = uniqueName("b");
    const listing = uniqueName("l");
    expect((await partner.put(`/partner/v1/brokers/${broker}`, sample.broker())).status).toBe(201);
    expect(
      (await partner.put(`/partner/v1/listings/${listing}`, sample.listing(broker, { status: "DRAFT" }))).status,
    ).toBe(201);
    expect((await partner.put(`/partner/v1/listings/${listing}`, { status: "FOR_SALE" })).status).toBe(200);
    const drafts = await draftsOf(partner.partnerId);
    expect(drafts.map((d) => [d.type, d.ordinal, d.feed_pending, d.same_event])).toEqual([
      ["broker.created", 0, null, true],
      ["listing.created", 0, null, true],
      ["listing.updated", 0, null, true],
      ["listing.status_changed", 1, null, true],
    ]);
    // The status move's two events belong to one outbox row.
    expect(drafts[2]!.outbox_id).toBe(drafts[3]!.outbox_id);

    const rolledBack = uniqueName("b");
    let seenInside: unknown[] = [];
    await api.sql
      .begin(async (tx) => {
        await upsertBroker(tx, { partnerId: partner.partnerId, mode: "live" }, rolledBack, sample.broker(), {
          origin: { keyId: null, requestId: "rolled-back" },
        });
        seenInside = (
          await tx`
            SELECT d.type FROM outbox o JOIN feed_drafts d ON d.outbox_id = o.id
            WHERE o.payload->>'type' = 'broker.upserted' AND o.payload->'payload'->>'externalId' = ${rolledBack}`
        ).map((r) => r.type);
        throw new Error("roll back");
      })
      .catch((err: Error) => expect(err.message).toBe("roll back"));
    expect(seenInside).toEqual(["broker.created"]);
    const [left] = await api.sql`
      SELECT (SELECT count(*)::int FROM outbox WHERE payload->'payload'->>'externalId' = ${rolledBack}) AS rows,
        (SELECT count(*)::int FROM feed_drafts WHERE data->>'externalBrokerId' = ${rolledBack}) AS drafts`;
    expect(left).toEqual({ rows: 0, drafts: 0 });

    await drain();
    expect((await draftsOf(partner.partnerId)).length).toBe(0);
    expect((await feedOf(partner.partnerId)).map((e) => [e.seq, e.record_seq, e.type])).toEqual([
      [1, 1, "broker.created"],
      [2, 2, "listing.created"],
      [3, 3, "listing.updated"],
      [4, 4, "listing.status_changed"],
    ]);
  });

  test("appendEvents writes a batch's rows in its order, each with its own drafts, in one statement", async () => {
    const partner = await api.createPartner();
    const write = (n: number, version: number) => ({
      row: outboxRow(
        BrokerUpserted,
        { aggregateId: String(1_000_000 + n), version, partnerId: partner.partnerId, mode: "live" },
        brokerUpsertedPayload({
          brokerId: String(1_000_000 + n),
          externalId: `ext-${n}`,
          officeId: 1,
          document: { name: "N" },
        }),
      ),
      feed: { changes: [{ path: `field${n}` }] },
    });
    const writes = [write(1, 1), write(2, 2), write(3, 1)];
    await api.sql.begin((tx) => appendEvents(tx, writes));
    const rows = await api.sql`
      SELECT o.id::text, o.message_key, o.feed_pending, d.type, d.data->>'externalBrokerId' AS ext, d.data->'changedPaths' AS paths,
        d.event_id::text = o.payload->>'eventId' AS same_event
      FROM outbox o JOIN feed_drafts d ON d.outbox_id = o.id
      WHERE o.payload->>'partnerId' = ${partner.partnerId} ORDER BY o.id`;
    expect(rows.map((r) => [r.message_key, r.feed_pending, r.type, r.ext, r.paths, r.same_event])).toEqual([
      ["1000001", null, "broker.created", "ext-1", ["field1"], true],
      ["1000002", null, "broker.updated", "ext-2", ["field2"], true],
      ["1000003", null, "broker.created", "ext-3", ["field3"], true],
    ]);
    await drain();
    expect((await feedOf(partner.partnerId)).map((e) => [e.seq, e.type])).toEqual([
      [1, "broker.created"],
      [2, "broker.updated"],
      [3, "broker.created"],
    ]);
  });

  test("rows a previous release's writer marked feed_pending are numbered in both audiences, in outbox order among drafts", async () => {
    await drain();
    const partner = await api.createPartner({ leadTracking: true });
    const broker = uniqueName("b");
    const listing = uniqueName("l");
    await partner.put(`/partner/v1/brokers/${broker}`, sample.broker());
    await partner.put(`/partner/v1/listings/${listing}`, sample.listing(broker, { status: "DRAFT" }));
    await partner.put(`/partner/v1/listings/${listing}`, { status: "FOR_SALE" });
    // What a v1.0.0 API leaves: the same outbox row and change history, no drafts, feed_pending true (its default).
    await api.sql.begin(async (tx) => {
      const [last] = await tx`
        SELECT max(outbox_id) AS id FROM feed_drafts WHERE partner_id = ${partner.partnerId}::uuid`;
      await tx`DELETE FROM feed_drafts WHERE outbox_id = ${last!.id}`;
      await tx`UPDATE outbox SET feed_pending = true WHERE id = ${last!.id}`;
    });
    // A fact written by a previous release's service: INSERT without feed_pending, so the column's default.
    const legacyLead = leadFact(partner.partnerId, "live", 1);
    await api.sql`
      INSERT INTO outbox (topic, message_key, payload)
      VALUES (${legacyLead.topic}, ${legacyLead.messageKey}, ${api.sql.json(legacyLead.envelope as never)})`;
    await partner.put(`/partner/v1/brokers/${broker}`, sample.broker({ name: "Jane Q. Broker" }));

    await drain();
    const [pending] = await api.sql`
      SELECT count(*)::int AS n FROM outbox WHERE feed_pending AND payload->>'partnerId' = ${partner.partnerId}`;
    expect(pending!.n).toBe(0);
    expect((await feedOf(partner.partnerId)).map((e) => [e.seq, e.record_seq, e.type])).toEqual([
      [1, 1, "broker.created"],
      [2, 2, "listing.created"],
      [3, 3, "listing.updated"],
      [4, 4, "listing.status_changed"],
      [5, null, "lead.received"],
      [6, 5, "broker.updated"],
    ]);
  });

  test("a draft waits behind a previous release's row its pass did not reach, even when the pass has room for it", async () => {
    await drain();
    const partner = await api.createPartner({ leadTracking: true });
    // Two rows that make no feed event (as lead.submitted), then a lead fact, all as a v1.0.0 writer leaves them
    // (feed_pending at its default); marked published, so no relay sends them to a topic (only the feed reads them).
    const legacyRow = (envelope: object) => api.sql`
      INSERT INTO outbox (topic, message_key, payload, published_at)
      VALUES ('pss-test.legacy', ${uniqueName("k")}, ${api.sql.json(envelope as never)}, now())`;
    for (let i = 0; i < 2; i++)
      await legacyRow({
        eventId: crypto.randomUUID(),
        type: "lead.submitted",
        aggregateId: "x",
        partnerId: partner.partnerId,
      });
    await legacyRow(leadFact(partner.partnerId, "live", 1).envelope);
    await partner.put(`/partner/v1/brokers/${uniqueName("b")}`, sample.broker());
    // Two rows per pass: the first pass drafts the two eventless rows and has room for the broker's draft, which
    // must still wait for the lead fact's row (earlier in the outbox) to be drafted and numbered first.
    const small = createFeedSequencer({ sql: api.sql, logger: silentLogger }, { retentionDays: 35, batchSize: 2 });
    while ((await small.runOnce()) > 0);
    expect((await feedOf(partner.partnerId)).map((e) => [e.seq, e.record_seq, e.type])).toEqual([
      [1, null, "lead.received"],
      [2, 1, "broker.created"],
    ]);
  });

  test("stop() numbers the drafts written before it: the last sequencer of a release leaves none behind", async () => {
    await drain();
    const partner = await api.createPartner();
    const paused = createFeedSequencer(
      { sql: api.sql, logger: silentLogger },
      { retentionDays: 35, idlePollMs: 600_000 },
    );
    paused.start();
    await Bun.sleep(200); // its first pass found nothing; the next is 10 minutes away
    await partner.put(`/partner/v1/brokers/${uniqueName("b")}`, sample.broker());
    expect((await draftsOf(partner.partnerId)).map((d) => d.type)).toEqual(["broker.created"]);
    await paused.stop();
    expect((await draftsOf(partner.partnerId)).length).toBe(0);
    expect((await feedOf(partner.partnerId)).map((e) => [e.seq, e.type])).toEqual([[1, "broker.created"]]);
  });

  test("one set-based pass numbers a mixed batch: partners, modes, lead and non-lead, consecutively after the heads", async () => {
    await drain();
    const a = await api.createPartner({ leadTracking: true, test: true });
    const b = await api.createPartner({ leadTracking: true });
    // Heads that exist already: the pass numbers after them.
    await a.put(`/partner/v1/brokers/${uniqueName("b")}`, sample.broker());
    await drain();

    const gone = crypto.randomUUID(); // a partner that does not exist: its drafts are dropped unnumbered
    await insertOutboxFacts(api.sql, [
      leadFact(a.partnerId, "live", 1),
      leadFact(b.partnerId, "live", 1),
      leadFact(gone, "live", 1),
      leadFact("not-a-uuid", "live", 2), // a hand-written row's: never a draft
    ]);
    // Those two are for the feed only: marked published, no relay sends them to consumers on the shared Kafka.
    await api.sql`
      UPDATE outbox SET published_at = now()
      WHERE published_at IS NULL AND payload->>'partnerId' IN (${gone}, 'not-a-uuid')`;
    await a.put(`/partner/v1/brokers/${uniqueName("b")}`, sample.broker());
    await a.test!.put(`/partner/v1/brokers/${uniqueName("b")}`, sample.broker());
    await b.put(`/partner/v1/brokers/${uniqueName("b")}`, sample.broker());
    await insertOutboxFacts(api.sql, [leadFact(a.partnerId, "test", 1), leadFact(a.partnerId, "live", 3)]);
    await a.put(`/partner/v1/brokers/${uniqueName("b")}`, sample.broker());
    await a.test!.put(`/partner/v1/brokers/${uniqueName("b")}`, sample.broker());

    // The non-UUID partner's fact made no draft; the gone partner's did.
    const [counts] = await api.sql`
      SELECT count(*) FILTER (WHERE partner_id = ${gone}::uuid)::int AS gone, count(*)::int AS all FROM feed_drafts`;
    expect(counts!.gone).toBe(1);
    expect(await sequencer.runOnce()).toBe(counts!.all);
    expect(await sequencer.runOnce()).toBe(0);

    const feedA = (await feedOf(a.partnerId)).map((e) => [e.mode, e.seq, e.record_seq, e.type]);
    expect(feedA).toEqual([
      ["live", 1, 1, "broker.created"],
      ["live", 2, null, "lead.received"],
      ["live", 3, 2, "broker.created"],
      ["live", 4, null, "lead.received"],
      ["live", 5, 3, "broker.created"],
      ["test", 1, 1, "broker.created"],
      ["test", 2, null, "lead.received"],
      ["test", 3, 2, "broker.created"],
    ]);
    expect((await feedOf(b.partnerId)).map((e) => [e.mode, e.seq, e.record_seq, e.type])).toEqual([
      ["live", 1, null, "lead.received"],
      ["live", 2, 1, "broker.created"],
    ]);
    const [heads] = await api.sql`
      SELECT h.last_seq::int, h.last_record_seq::int FROM partner_feed_heads h WHERE partner_id = ${a.partnerId} AND mode = 'live'`;
    expect(heads).toEqual({ last_seq: 5, last_record_seq: 3 });
    const [goneFeed] = await api.sql`
      SELECT (SELECT count(*)::int FROM partner_feed WHERE partner_id = ${gone}::uuid) AS events,
        (SELECT count(*)::int FROM feed_drafts WHERE partner_id = ${gone}::uuid) AS drafts`;
    expect(goneFeed).toEqual({ events: 0, drafts: 0 });
  });
});
