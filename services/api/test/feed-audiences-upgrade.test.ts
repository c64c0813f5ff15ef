// The records numbering (what keys without lead tracking read, migration 0029) across an upgrade, against the real
// API and PostgreSQL (issue 37, items 11 and 12; docs/leads.md "What a key without lead tracking can observe").
//
// Item 11, on a database of the test's own that starts at the schema before 0029 with feed history as the previous
// release left it (one numbering for every key, lead events included): after the migrations, two partners whose
// histories differ only in their number of leads answer a key without lead tracking exactly alike (the 410, the
// numbers, the stored deliveries), and no cursor of the old numbering is ever answered with a page that skips.
//
// Item 12, on the test database: the previous release's retention (v1.0.0's prune, its SQL as it is at commit
// 81a001b, where CHANGELOG.md's v1.0.0 was cut; it raises pruned_through only) must leave a key without lead
// tracking its 410, not a 200 over deleted events. The statements are replayed here rather than v1.0.0's relay
// process run: a retention pass needs events 35 days old, which only a write to sequenced_at makes, and the
// statements are exactly what that process sends (test/upgrades/ runs the whole v1.0.0 release where the tag is).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Redis from "ioredis";
import postgres from "postgres";
import { LeadReceived, leadReceivedFact } from "@pss/contracts";
import { loadMigrations, migrate } from "@pss/database";
import { createFeedSequencer, insertOutboxFacts, partnerFactRow, silentLogger } from "@pss/service-kit";
import { testUrls, uniqueName } from "../../../test/support/env.ts";
import { createPartnerAdmin } from "../src/admin/partner-admin.ts";
import { call, sample, startApi, type ApiHarness } from "./support/harness.ts";

const urls = testUrls();
const dbUrl = (name: string) => {
  const u = new URL(urls.DATABASE_URL);
  u.pathname = `/${name}`;
  return u.toString();
};
const UPGRADED = `${new URL(urls.DATABASE_URL).pathname.slice(1)}_feedup_${Math.random().toString(36).slice(2, 8)}`;
const server = postgres(dbUrl("postgres"), { max: 1, onnotice: () => {} });
/** Where the records numbering of a partner with feed history goes on after migration 0037. */
const BASE = 1_000_000_000_000;

const feed = (baseUrl: string, key: string, after?: string | number) =>
  call(baseUrl, "GET", `/partner/v1/events?limit=1000${after !== undefined ? `&after=${after}` : ""}`, { key });

afterAll(async () => {
  await server.unsafe(`DROP DATABASE IF EXISTS "${UPGRADED}" WITH (FORCE)`).catch(() => {});
  await server.end();
});

describe("item 11: the records numbering after the upgrade reveals nothing", () => {
  let db: postgres.Sql;
  let redis: Redis;
  let api: ApiHarness;
  // Two partners with the same records history, one with 4 leads among them, one with none; and one whose
  // database ran 0029's numbering for a while before 0037 (a build between the two).
  const partners: Record<"leads" | "quiet" | "between", { id: string; key: string }> = {} as never;
  type Event = { type: string; lead?: boolean };
  const published: Event = { type: "listing.published" };
  const lead: Event = { type: "lead.received", lead: true };
  const histories: Record<keyof typeof partners, Event[]> = {
    leads: [published, lead, lead, published, lead, lead, published],
    quiet: [published, published, published],
    between: [published, lead, published],
  };
  const eventIds = new Map<string, string[]>();

  /** The feed rows and one non-lead endpoint with a delivery per records event, as the previous release wrote them. */
  async function previousReleaseHistory(name: keyof typeof partners) {
    const { id } = partners[name];
    const ids = histories[name].map(() => crypto.randomUUID());
    eventIds.set(name, ids);
    for (const [i, e] of histories[name].entries())
      await db`
        INSERT INTO partner_feed (partner_id, mode, seq, type, event_id, record_type, version, data, occurred_at)
        VALUES (${id}::uuid, 'live', ${i + 1}, ${e.type}, ${ids[i]!}::uuid, 'listing', ${i + 1},
          ${db.json({ externalListingId: "l1" })}, now())`;
    await db`INSERT INTO partner_feed_heads (partner_id, mode, last_seq) VALUES (${id}::uuid, 'live', ${histories[name].length})`;
    const [endpoint] = await db`
      INSERT INTO webhook_endpoints (partner_id, external_id, url, events, secret_encrypted)
      VALUES (${id}::uuid, 'crm', 'https://crm.example.com/hook', ${["listing.published"]}::text[], 'v1.x.y.z') RETURNING id`;
    for (const [i, e] of histories[name].entries())
      if (!e.lead)
        await db`
          INSERT INTO webhook_deliveries (id, endpoint_id, partner_id, event_id, event_type, payload, status, created_at)
          VALUES (gen_random_uuid(), ${endpoint!.id}, ${id}::uuid, ${ids[i]!}::uuid, ${e.type},
            ${JSON.stringify({ type: e.type, timestamp: "2026-11-01T00:00:00.000Z", data: { externalListingId: "l1", sequence: i + 1 } })},
            'delivered', now() - ${histories[name].length - i} * interval '1 second')`;
  }

  beforeAll(async () => {
    await server.unsafe(`CREATE DATABASE "${UPGRADED}"`);
    db = postgres(dbUrl(UPGRADED), { max: 2, onnotice: () => {} });
    const all = loadMigrations();
    await migrate(
      db,
      all.filter((m) => m.version < "0029"),
    );
    redis = new Redis(urls.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    redis.on("error", () => {});
    await redis.connect();
    const admin = createPartnerAdmin({ sql: db, redis });
    for (const name of Object.keys(histories) as (keyof typeof partners)[]) {
      const created = await admin.createPartner({ name: uniqueName(`feedup-${name}`), leadTracking: false });
      partners[name] = { id: created.partnerId, key: created.apiKey };
      await previousReleaseHistory(name);
    }
    // A build with 0029 but not 0037 numbered two more events of `between` in its records numbering (after its
    // last number, 3), and delivered one of them with that number.
    await migrate(
      db,
      all.filter((m) => m.version < "0037"),
    );
    const between = partners.between.id;
    const later = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    eventIds.set("between-later", later);
    for (const [i, [type, recordSeq]] of (
      [
        ["broker.updated", 4],
        ["lead.received", null],
        ["broker.updated", 5],
      ] as const
    ).entries())
      await db`
        INSERT INTO partner_feed (partner_id, mode, seq, record_seq, type, event_id, record_type, version, data, occurred_at)
        VALUES (${between}::uuid, 'live', ${4 + i}, ${recordSeq}, ${type}, ${later[i]!}::uuid, 'broker', ${4 + i},
          ${db.json({ externalBrokerId: "b1" })}, now())`;
    await db`UPDATE partner_feed_heads SET last_seq = 6, last_record_seq = 5 WHERE partner_id = ${between}::uuid`;
    await db`
      INSERT INTO webhook_deliveries (id, endpoint_id, partner_id, event_id, event_type, payload, status)
      SELECT gen_random_uuid(), e.id, e.partner_id, ${later[0]!}::uuid, 'broker.updated',
        ${JSON.stringify({ type: "broker.updated", timestamp: "2026-11-02T00:00:00.000Z", data: { externalBrokerId: "b1", sequence: 4 } })}, 'pending'
      FROM webhook_endpoints e WHERE e.partner_id = ${between}::uuid`;
    // This release's migrations, then its API.
    await migrate(db, all);
    api = await startApi({ databaseUrl: dbUrl(UPGRADED), relay: false });
  }, 120_000);

  afterAll(async () => {
    await api?.stop();
    redis?.disconnect();
    await db?.end();
  });

  test("a key without lead tracking gets the same 410 whether its partner had leads before the upgrade or not; it names no count", async () => {
    const answers = await Promise.all(
      (["leads", "quiet"] as const).map(async (name) => {
        const res = await feed(api.baseUrl, partners[name].key, 0);
        return { status: res.status, body: res.body };
      }),
    );
    expect(answers[0]!.status).toBe(410);
    expect(answers[0]!.body.error).toContain(`Events up to sequence ${BASE} are no longer kept`);
    expect(answers[0]!.body.error).toContain(`after=${BASE}`);
    expect(answers[1]).toEqual(answers[0]!);
    // Without a cursor: nothing from before the upgrade is in this numbering, and the cursor to go on from is 0,
    // for both alike.
    const fresh = await Promise.all(
      (["leads", "quiet"] as const).map(async (name) => (await feed(api.baseUrl, partners[name].key)).body),
    );
    expect(fresh[0]).toEqual({ status: "success", results: [], nextCursor: "0" });
    expect(fresh[1]).toEqual(fresh[0]!);
  });

  test("every cursor of the old numbering (lead holes and all) is answered 410, never a page that skips", async () => {
    for (const after of [1, 4, 6, 7])
      expect({ after, status: (await feed(api.baseUrl, partners.leads.key, after)).status }).toEqual({
        after,
        status: 410,
      });
    for (const after of [1, 3]) expect((await feed(api.baseUrl, partners.quiet.key, after)).status).toBe(410);
  });

  test("new events go on from the same number for both partners, one after the other", async () => {
    const sequencer = createFeedSequencer({ sql: api.sql, logger: silentLogger }, { retentionDays: 35 });
    const read: Record<string, unknown[]> = {};
    for (const name of ["leads", "quiet"] as const) {
      const client = { apiKey: partners[name].key };
      for (const id of [uniqueName("b"), uniqueName("b")])
        expect(
          (
            await call(api.baseUrl, "PUT", `/partner/v1/brokers/${id}`, {
              key: client.apiKey,
              body: sample.broker(),
            })
          ).status,
        ).toBe(201);
    }
    while ((await sequencer.runOnce()) > 0);
    for (const name of ["leads", "quiet"] as const) {
      const page = await feed(api.baseUrl, partners[name].key, BASE);
      expect(page.status).toBe(200);
      read[name] = page.body.results.map((e: { sequence: number; type: string }) => [e.sequence, e.type]);
    }
    expect(read.leads).toEqual([
      [BASE + 1, "broker.created"],
      [BASE + 2, "broker.created"],
    ]);
    expect(read.quiet).toEqual(read.leads);
  });

  test("stored deliveries to an endpoint without lead data carry no number of the old numbering", async () => {
    const listed = await Promise.all(
      (["leads", "quiet"] as const).map(async (name) => {
        const res = await call(api.baseUrl, "GET", "/partner/v1/webhook-deliveries?endpointId=crm&limit=20", {
          key: partners[name].key,
        });
        expect({ status: res.status, body: res.status === 200 ? null : res.body }).toEqual({ status: 200, body: null });
        return res.body.results.map((d: { payload: { data: Record<string, unknown> } }) => d.payload.data);
      }),
    );
    expect(listed[0]).toEqual([{ externalListingId: "l1" }, { externalListingId: "l1" }, { externalListingId: "l1" }]);
    expect(listed[1]).toEqual(listed[0]!);
  });

  test("a database that already ran 0029's numbering: those events keep their order after the base, their deliveries their new numbers, and its old cursors get 410", async () => {
    const key = partners.between.key;
    for (const after of [0, 3, 4, 5]) expect((await feed(api.baseUrl, key, after)).status).toBe(410);
    const page = await feed(api.baseUrl, key, BASE);
    expect(page.status).toBe(200);
    const later = eventIds.get("between-later")!;
    expect(page.body.results.map((e: { sequence: number; type: string }) => [e.sequence, e.type])).toEqual([
      [BASE + 1, "broker.updated"],
      [BASE + 2, "broker.updated"],
    ]);
    const [delivery] = await api.sql`
      SELECT payload FROM webhook_deliveries WHERE partner_id = ${partners.between.id}::uuid AND event_id = ${later[0]!}::uuid`;
    expect(JSON.parse(delivery!.payload).data).toEqual({ externalBrokerId: "b1", sequence: BASE + 1 });
    // The next event numbered goes on from there.
    expect(
      (await call(api.baseUrl, "PUT", `/partner/v1/brokers/${uniqueName("b")}`, { key, body: sample.broker() })).status,
    ).toBe(201);
    const sequencer = createFeedSequencer({ sql: api.sql, logger: silentLogger }, { retentionDays: 35 });
    while ((await sequencer.runOnce()) > 0);
    expect((await feed(api.baseUrl, key, BASE + 2)).body.results.map((e: { sequence: number }) => e.sequence)).toEqual([
      BASE + 3,
    ]);
  });
});

describe("item 12: the previous release's retention keeps the records audience's 410 true", () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ relay: false });
  });
  afterAll(async () => {
    await api?.stop();
  });

  /** v1.0.0's FeedSequencer.prune() (packages/service-kit/src/feed-sequencer.ts at 81a001b), statement for statement. */
  async function previousReleasePrune(sql: postgres.Sql, retentionDays: number): Promise<number> {
    return sql.begin(async (tx) => {
      const gone = await tx`
        DELETE FROM partner_feed WHERE sequenced_at < now() - ${retentionDays}::int * interval '1 day'
        RETURNING partner_id, mode, seq`;
      if (gone.length === 0) return 0;
      const through = new Map<string, number>();
      for (const g of gone)
        through.set(
          `${g.partner_id} ${g.mode}`,
          Math.max(through.get(`${g.partner_id} ${g.mode}`) ?? 0, Number(g.seq)),
        );
      for (const [key, seq] of through) {
        const [partnerId, mode] = key.split(" ");
        await tx`UPDATE partner_feed_heads SET pruned_through = greatest(pruned_through, ${seq}) WHERE partner_id = ${partnerId!}::uuid AND mode = ${mode!}`;
      }
      return gone.length;
    });
  }

  /** A partner with lead tracking, a second key of it without, a sequencer to run passes, and its lead facts. */
  async function partnerWithTwoAudiences() {
    const partner = await api.createPartner({ leadTracking: true });
    const withoutLeads = (
      await createPartnerAdmin({ sql: api.sql, redis: api.redis }).createKey({
        partnerId: partner.partnerId,
        leadTracking: false,
      })
    ).apiKey;
    const sequencer = createFeedSequencer({ sql: api.sql, logger: silentLogger }, { retentionDays: 35 });
    const leadEvent = (count: number) =>
      partnerFactRow(
        LeadReceived,
        { aggregateId: crypto.randomUUID(), version: count, partnerId: partner.partnerId, mode: "live" },
        leadReceivedFact({ id: "1", external_id: "l" } as never, { id: "1", external_id: "b" } as never, {
          officeId: 1,
          officeLeadCount: count,
        }),
      );
    return { partner, withoutLeads, sequencer, leadEvent };
  }

  test("a stale cursor of a key without lead tracking gets 410 naming its own number, not a 200 over the deleted events", async () => {
    const { partner, withoutLeads, sequencer, leadEvent } = await partnerWithTwoAudiences();
    // Full numbering: 1 broker, 2 lead, 3 broker, 4 lead, 5 broker, 6 broker; records: 1, 2, 3, 4.
    const writes: (() => Promise<unknown>)[] = [
      () => partner.put(`/partner/v1/brokers/${uniqueName("b")}`, sample.broker()),
      () => insertOutboxFacts(api.sql, [leadEvent(1)]),
      () => partner.put(`/partner/v1/brokers/${uniqueName("b")}`, sample.broker()),
      () => insertOutboxFacts(api.sql, [leadEvent(2)]),
      () => partner.put(`/partner/v1/brokers/${uniqueName("b")}`, sample.broker()),
      () => partner.put(`/partner/v1/brokers/${uniqueName("b")}`, sample.broker()),
    ];
    for (const write of writes) {
      await write();
      while ((await sequencer.runOnce()) > 0);
    }
    const numbers = await api.sql`
      SELECT seq::int, record_seq::int FROM partner_feed WHERE partner_id = ${partner.partnerId}::uuid ORDER BY seq`;
    expect(numbers.map((n) => [n.seq, n.record_seq])).toEqual([
      [1, 1],
      [2, null],
      [3, 2],
      [4, null],
      [5, 3],
      [6, 4],
    ]);
    // The previous release's retention removes the four oldest (two records, two leads).
    await api.sql`
      UPDATE partner_feed SET sequenced_at = now() - interval '40 days' WHERE partner_id = ${partner.partnerId}::uuid AND seq <= 4`;
    expect(await previousReleasePrune(api.sql, 35)).toBe(4);

    const gone = await feed(api.baseUrl, withoutLeads, 0);
    expect(gone.status).toBe(410);
    expect(gone.body.error).toContain("after=2");
    expect((await feed(api.baseUrl, withoutLeads, 1)).status).toBe(410);
    expect(
      (await feed(api.baseUrl, withoutLeads, 2)).body.results.map((e: { sequence: number }) => e.sequence),
    ).toEqual([3, 4]);
    // The key with lead tracking: as before.
    expect((await feed(api.baseUrl, partner.apiKey, 3)).body.error).toContain("after=4");

    // Everything removed, the last record event included: the whole records numbering counts as removed.
    await api.sql`UPDATE partner_feed SET sequenced_at = now() - interval '40 days' WHERE partner_id = ${partner.partnerId}::uuid`;
    expect(await previousReleasePrune(api.sql, 35)).toBe(2);
    expect((await feed(api.baseUrl, withoutLeads, 3)).body.error).toContain("after=4");
    expect((await feed(api.baseUrl, withoutLeads, 4)).status).toBe(200);
  });

  test("a pass of the previous release's retention that removes only a lead event moves nothing the key without lead tracking could see", async () => {
    const { partner, withoutLeads, sequencer, leadEvent } = await partnerWithTwoAudiences();
    await insertOutboxFacts(api.sql, [leadEvent(1)]);
    await partner.put(`/partner/v1/brokers/${uniqueName("b")}`, sample.broker());
    while ((await sequencer.runOnce()) > 0);
    await api.sql`
      UPDATE partner_feed SET sequenced_at = now() - interval '40 days' WHERE partner_id = ${partner.partnerId}::uuid AND seq = 1`;
    expect(await previousReleasePrune(api.sql, 35)).toBe(1);
    const page = await feed(api.baseUrl, withoutLeads, 0);
    expect(page.status).toBe(200);
    expect(page.body.results.map((e: { sequence: number }) => e.sequence)).toEqual([1]);
  });
});
