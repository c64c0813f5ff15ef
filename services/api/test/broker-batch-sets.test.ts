// The set-based write of a broker batch (broker-batch-writes.ts) against the real API and PostgreSQL: one mixed
// batch of creates, updates (lists shortened, grown and kept, an avatar replaced), an identical repeat, a refused
// item and an item that loses a version race to a concurrent single PUT. Every item's answer and every row stored
// for it are checked, and the stored brokers are compared with the same writes sent as single PUTs.
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

const normalized = (value: unknown): unknown =>
  JSON.parse(
    JSON.stringify(value, (key, v) =>
      ["serviceBrokerId", "brokerId", "officeId", "createdAt", "updatedAt", "occurredAt", "eventId"].includes(key)
        ? typeof v
        : typeof v === "string" && /^https?:\/\/[^/]+\/(brokers|b)\//.test(v)
          ? v.replace(/\d+/g, "N")
          : v,
    ),
  );

async function stored(partnerId: string, externalId: string): Promise<postgres.Row | null> {
  const [row] = await api.sql`
    SELECT b.id::text AS id, b.version, b.name, b.avatar_url, b.avatar_state, b.avatar_width, b.write_xid::text AS xid,
      (SELECT json_agg(json_build_array(l.position, l.license_number, l.state) ORDER BY l.position) FROM broker_licenses l WHERE l.broker_id = b.id) AS licenses,
      (SELECT json_agg(json_build_array(a.position, a.city, a.county, a.state) ORDER BY a.position) FROM broker_service_areas a WHERE a.broker_id = b.id) AS areas,
      (SELECT json_agg(json_build_array(h.version, (SELECT json_agg(c->>'path') FROM jsonb_array_elements(h.changes) c)) ORDER BY h.id) FROM broker_history h WHERE h.broker_id = b.id) AS history,
      (SELECT json_agg(json_build_object('id', o.id, 'version', (o.payload->'version')::int, 'payload', o.payload->'payload') ORDER BY o.id)
         FROM outbox o WHERE o.topic = 'pss.broker-events.v1' AND o.message_key = b.id::text) AS events
    FROM brokers b WHERE b.partner_id = ${partnerId} AND b.external_id = ${externalId}`;
  return row ?? null;
}

const license = (n: string, state = "TX") => ({ licenseNumber: n, state, country: "US" });

test("a mixed broker batch: set-based creates and updates, a repeat, a refusal and a lost race each answered and stored as alone", async () => {
  const batched = await api.createPartner();
  const single = await api.createPartner();
  const ids = { c1: uniqueName("c1"), u1: uniqueName("u1"), u2: uniqueName("u2"), n1: uniqueName("n1") };
  const more = { v1: uniqueName("v1"), r1: uniqueName("r1"), c2: uniqueName("c2") };
  const avatar1 = { avatarUrl: "https://a.example.com/1.jpg" };
  for (const p of [batched, single]) {
    for (const id of [ids.u2, ids.n1, more.r1])
      expect((await p.put(`/partner/v1/brokers/${id}`, sample.broker(avatar1))).status).toBe(201);
    const three = [license("X1"), license("X2"), license("X3")];
    expect((await p.put(`/partner/v1/brokers/${ids.u1}`, sample.broker({ ...avatar1, licenses: three }))).status).toBe(
      201,
    );
    // The avatar was processed: kept while its URL stays, reset when it changes.
    await api.sql`UPDATE brokers SET avatar_state = 'ready', avatar_width = 64 WHERE partner_id = ${p.partnerId}`;
  }
  const items = [
    { id: ids.c1, body: sample.broker({ name: "New", licenses: [license("A"), license("B", "OK")] }) },
    // Licenses shortened (one kept, changed), service areas grown.
    {
      id: ids.u1,
      body: sample.broker({
        ...avatar1,
        licenses: [license("Z")],
        serviceAreas: [...sample.broker().serviceAreas, { city: "Dallas", state: "TX", country: "US" }],
      }),
    },
    { id: ids.n1, body: sample.broker(avatar1) },
    { id: more.v1, body: sample.broker({ licenses: [{}] }) },
    { id: ids.u2, body: sample.broker({ name: "Renamed", avatarUrl: "https://a.example.com/2.jpg" }) },
    // No phone: the concurrent PUT's phone stays when the batch's change is merged onto it.
    { id: more.r1, body: sample.broker({ ...avatar1, name: "from the batch", phone: undefined }) },
    { id: more.c2, body: sample.broker() },
  ];

  // The race, made certain as in listing-batch-sets.test.ts: an uncommitted row with c2's key holds the batch's
  // create statement (and the update pipelined behind it) while a single PUT changes r1.
  const blocker = await api.sql.reserve();
  const [{ office }] = await blocker<
    [{ office: number }]
  >`SELECT office_id AS office FROM brokers WHERE partner_id = ${batched.partnerId} LIMIT 1`;
  await blocker`BEGIN`;
  let batchDone: ReturnType<typeof call> | undefined;
  try {
    await blocker`INSERT INTO brokers (partner_id, external_id, office_id, name, email, content_hash)
      VALUES (${batched.partnerId}, ${more.c2}, ${office}, 'x', 'x@example.com', '\\x00')`;
    batchDone = call(api.baseUrl, "POST", "/partner/v1/brokers/batch", {
      key: batched.apiKey,
      body: { items: items.map((i) => ({ externalBrokerId: i.id, broker: i.body })) },
    });
    await untilWaitingOnLock(
      api.sql,
      "INSERT INTO brokers (partner_id",
      "the batch's create waits for the uncommitted row",
    );
    const concurrent = await batched.put(
      `/partner/v1/brokers/${more.r1}`,
      sample.broker({ ...avatar1, phone: "+1 512 555 0199" }),
    );
    expect({ status: concurrent.status, body: concurrent.body }).toMatchObject({ status: 200 });
  } finally {
    await blocker`ROLLBACK`;
    blocker.release();
  }
  const batch = await batchDone!;

  expect(batch.status).toBe(200);
  expect(batch.body.results.map((r: any) => [r.externalBrokerId, r.httpStatus, r.changed])).toEqual([
    [ids.c1, 201, true],
    [ids.u1, 200, true],
    [ids.n1, 200, false],
    [more.v1, 400, false],
    [ids.u2, 200, true],
    [more.r1, 200, true],
    [more.c2, 201, true],
  ]);
  expect(await stored(batched.partnerId, more.v1)).toBeNull();
  const rows = {} as Record<keyof typeof ids | "r1" | "c2", postgres.Row>;
  for (const [k, id] of Object.entries({ ...ids, r1: more.r1, c2: more.c2 }))
    rows[k as keyof typeof rows] = (await stored(batched.partnerId, id))!;
  const versions = (k: keyof typeof rows) => rows[k].events.map((e: { version: number }) => e.version);
  expect([rows.c1.version, rows.c1.licenses, versions("c1")]).toEqual([
    1,
    [
      [0, "A", "TX"],
      [1, "B", "OK"],
    ],
    [1],
  ]);
  expect(rows.c1.events[0].payload.officeId).toBe(batched.officeId);
  expect(rows.c1.areas).toEqual([[0, "Austin", null, "TX"]]);
  expect([rows.n1.version, rows.n1.history.length, versions("n1")]).toEqual([1, 1, [1]]);
  expect([rows.u1.version, rows.u1.licenses, versions("u1")]).toEqual([2, [[0, "Z", "TX"]], [1, 2]]);
  expect(rows.u1.areas.map((a: unknown[]) => a[1])).toEqual(["Austin", "Dallas"]);
  expect(rows.u1.history[1]).toEqual([2, ["licenses", "serviceAreas"]]);
  expect([rows.u1.avatar_state, rows.u1.avatar_width]).toEqual(["ready", 64]);
  expect([rows.u2.name, rows.u2.avatar_url, rows.u2.avatar_state, rows.u2.avatar_width]).toEqual([
    "Renamed",
    "https://a.example.com/2.jpg",
    "pending",
    null,
  ]);
  expect(rows.u2.licenses).toHaveLength(1);
  // The lost race was run again alone, merged onto the concurrent PUT's version.
  expect([rows.r1.version, rows.r1.name, versions("r1")]).toEqual([3, "from the batch", [1, 2, 3]]);
  expect(rows.r1.events[2].payload.phone).toBe("+1 512 555 0199");
  const together = (["c1", "u1", "u2", "c2"] as const).map((k) => rows[k]);
  expect(new Set(together.map((r) => r.xid)).size).toBe(1);
  expect(rows.r1.xid).not.toBe(rows.c1.xid);
  const eventIds = together.map((r) => Number(r.events.at(-1).id));
  expect([...eventIds].sort((a, b) => a - b)).toEqual(eventIds);

  for (const item of items.filter((i) => i.id !== more.r1 && i.id !== more.v1))
    await single.put(`/partner/v1/brokers/${item.id}`, item.body);
  for (const k of ["c1", "u1", "n1", "u2", "c2"] as const) {
    const id = k in ids ? ids[k as keyof typeof ids] : more[k as keyof typeof more];
    expect({ k, ...(await compared(batched, id)) }).toEqual({ k, ...(await compared(single, id)) });
  }
});

async function compared(partner: Partner, externalId: string) {
  const got = await partner.get(`/partner/v1/brokers/${externalId}`);
  const { id, xid, events, ...row } = (await stored(partner.partnerId, externalId))!;
  return {
    status: got.status,
    broker: normalized(got.body),
    events: normalized(events.map((e: { version: number; payload: unknown }) => [e.version, e.payload])),
    row,
  };
}
