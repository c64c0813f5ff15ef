// PUT ?dryRun=true against the real API and servers: for every example the spec gives (section 2's bodies,
// section 3's status moves, the update rules), a dry run is made first and must leave PostgreSQL (rows, versions,
// outbox) unchanged; the real PUT then must do exactly what the dry run said: the same outcome, the same changed
// paths (as recorded in the change history), the same 400/404. Kafka must carry only the real PUTs' events.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Topics } from "@pss/contracts";
import { uniqueName } from "../../../test/support/env.ts";
import { call, sample, startApi, type ApiHarness, type Partner, type TestResponse } from "./support/harness.ts";
import { messagesBetween, topicEnds, type TopicEnds } from "./support/topic-range.ts";

let api: ApiHarness;
let partner: Partner;
let startEnds: TopicEnds;
const TOPICS = [Topics.listingEvents.name, Topics.brokerEvents.name];

beforeAll(async () => {
  api = await startApi();
  partner = await api.createPartner();
  startEnds = await topicEnds(api.kafka, TOPICS);
});
afterAll(() => api?.stop());

/** Everything a PUT could change for this partner, summed up: rows, versions, hashes, histories, outbox rows. */
async function snapshot() {
  const [row] = await api.sql`
    SELECT
      (SELECT count(*) FROM listings WHERE partner_id = ${partner.partnerId})::int AS listings,
      (SELECT count(*) FROM brokers WHERE partner_id = ${partner.partnerId})::int AS brokers,
      (SELECT coalesce(sum(version), 0) FROM listings WHERE partner_id = ${partner.partnerId})::int AS listing_versions,
      (SELECT coalesce(sum(version), 0) FROM brokers WHERE partner_id = ${partner.partnerId})::int AS broker_versions,
      (SELECT string_agg(encode(content_hash, 'hex'), ',' ORDER BY id) FROM listings WHERE partner_id = ${partner.partnerId}) AS listing_hashes,
      (SELECT string_agg(encode(content_hash, 'hex') || updated_at::text, ',' ORDER BY id) FROM brokers WHERE partner_id = ${partner.partnerId}) AS broker_hashes,
      (SELECT count(*) FROM listing_photos p JOIN listings l ON l.id = p.listing_id WHERE l.partner_id = ${partner.partnerId})::int AS photos,
      (SELECT count(*) FROM listing_status_history h JOIN listings l ON l.id = h.listing_id WHERE l.partner_id = ${partner.partnerId})::int AS statuses,
      (SELECT count(*) FROM broker_licenses x JOIN brokers b ON b.id = x.broker_id WHERE b.partner_id = ${partner.partnerId})::int AS licenses,
      (SELECT count(*) FROM listing_history h JOIN listings l ON l.id = h.listing_id WHERE l.partner_id = ${partner.partnerId})::int AS listing_history,
      (SELECT count(*) FROM broker_history h JOIN brokers b ON b.id = h.broker_id WHERE b.partner_id = ${partner.partnerId})::int AS broker_history,
      (SELECT count(*) FROM outbox WHERE payload->>'partnerId' = ${partner.partnerId})::int AS outbox`;
  return row;
}

/** Changed paths the real PUT recorded under this request ID: the listing's and, prefixed, its inline broker's. */
async function recordedPaths(requestId: string, listingPut: boolean): Promise<string[] | null> {
  const rows = await api.sql`
    SELECT 'listing' AS kind, changes FROM listing_history WHERE request_id = ${requestId}
    UNION ALL SELECT 'broker', changes FROM broker_history WHERE request_id = ${requestId}`;
  if (rows.length === 0) return null;
  return rows
    .flatMap((r) =>
      (r.changes as { path: string }[]).map((c) => (r.kind === "broker" && listingPut ? `broker.${c.path}` : c.path)),
    )
    .sort();
}

let step = 0;
/**
 * The dry run first (the database must not move), then the same PUT for real, which must match it. A dry run
 * of a listing whose inline broker alone changes reports only broker.* paths, and the PUT records only those.
 */
async function dryRunThenPut(
  path: string,
  body: unknown,
  opts: { inlineBrokerOnly?: boolean } = {},
): Promise<{ dry: TestResponse; real: TestResponse }> {
  const before = await snapshot();
  const dry = await call(api.baseUrl, "PUT", `${path}?dryRun=true`, { key: partner.apiKey, body });
  expect(await snapshot()).toEqual(before);

  const requestId = `dry-run-test-${++step}-${uniqueName("r")}`;
  const real = await call(api.baseUrl, "PUT", path, {
    key: partner.apiKey,
    body,
    headers: { "x-request-id": requestId },
  });
  if (dry.status !== 200) {
    // Refused: the same answer, and the real PUT changed nothing either.
    expect({ status: real.status, body: real.body }).toEqual({ status: dry.status, body: dry.body });
    expect(await snapshot()).toEqual(before);
    return { dry, real };
  }
  expect(dry.body).toEqual({
    status: "success",
    dryRun: true,
    outcome: expect.any(String),
    changedPaths: expect.any(Array),
    warnings: expect.any(Array),
    qualityScore: expect.any(Number),
  });
  // The dry run's warnings are those the real PUT then answers with (no photo is processed in between here).
  expect({ warnings: real.body.warnings, qualityScore: real.body.qualityScore }).toEqual({
    warnings: dry.body.warnings,
    qualityScore: dry.body.qualityScore,
  });
  const recorded = await recordedPaths(requestId, path.startsWith("/partner/v1/listings/"));
  switch (dry.body.outcome) {
    case "wouldCreate":
      expect(real.status).toBe(201);
      expect(recorded).toEqual(dry.body.changedPaths);
      break;
    case "wouldUpdate":
      expect(real.status).toBe(200);
      expect(recorded).toEqual(dry.body.changedPaths);
      expect(dry.body.changedPaths.length).toBeGreaterThan(0);
      if (opts.inlineBrokerOnly) expect(dry.body.changedPaths.every((p: string) => p.startsWith("broker."))).toBe(true);
      break;
    case "noChange":
      expect(real.status).toBe(200);
      expect(recorded).toBeNull();
      expect(dry.body.changedPaths).toEqual([]);
      expect(await snapshot()).toEqual(before);
      break;
    default:
      throw new Error(`unexpected outcome ${dry.body.outcome}`);
  }
  return { dry, real };
}

const expectDry = (r: { dry: TestResponse }, outcome: string, paths?: string[]) => {
  expect(r.dry.body.outcome).toBe(outcome);
  if (paths) expect(r.dry.body.changedPaths).toEqual(paths);
};

describe("a dry run of every spec example matches what the real PUT then does", () => {
  const brokerA = uniqueName("broker-a");
  const brokerB = uniqueName("broker-b");

  test("brokers: full create, minimal create, nested and list updates, a cleared field, an identical repeat, refusals", async () => {
    // Section 2: a broker with every field.
    const full = sample.broker({ avatarUrl: "https://images.example.com/jane.jpg" });
    expectDry(await dryRunThenPut(`/partner/v1/brokers/${brokerA}`, full), "wouldCreate");
    // Minimal: name and email.
    expectDry(
      await dryRunThenPut(`/partner/v1/brokers/${brokerB}`, { name: "Bob Broker", email: "bob@example.com" }),
      "wouldCreate",
      ["email", "name"],
    );
    // Nested objects merge field by field; lists replace the whole list.
    expectDry(
      await dryRunThenPut(`/partner/v1/brokers/${brokerA}`, {
        name: full.name,
        email: full.email,
        phone: "+1 512 555 0111",
        profile: { bio: "Thirty years." },
        licenses: [{ licenseNumber: "TX-999", state: "TX", country: "US" }],
      }),
      "wouldUpdate",
      ["licenses", "phone", "profile.bio"],
    );
    // null clears an optional field.
    expectDry(
      await dryRunThenPut(`/partner/v1/brokers/${brokerA}`, { name: full.name, email: full.email, avatarUrl: null }),
      "wouldUpdate",
      ["avatarUrl"],
    );
    // PUT is idempotent: the same body again changes nothing.
    expectDry(
      await dryRunThenPut(`/partner/v1/brokers/${brokerA}`, { name: full.name, email: full.email, avatarUrl: null }),
      "noChange",
      [],
    );
    // Refusals: name and email are required on every broker PUT; a bad country code; a service area naming no place.
    const missing = await dryRunThenPut(`/partner/v1/brokers/${brokerA}`, { name: full.name });
    expect(missing.dry.status).toBe(400);
    expect(
      (await dryRunThenPut(`/partner/v1/brokers/${brokerA}`, { ...full, licenses: [{ country: "usa" }] })).dry.status,
    ).toBe(400);
    expect(
      (await dryRunThenPut(`/partner/v1/brokers/${brokerA}`, { ...full, serviceAreas: [{ country: "US" }] })).dry
        .status,
    ).toBe(400);
  });

  test("listings: the minimal listing, a full one, inline brokers, nested and list updates, reassignment, refusals", async () => {
    const minimal = uniqueName("minimal");
    // "The minimal valid listing shows city, state, country and visibility."
    const minimalBody = {
      brokerExternalId: brokerA,
      status: "DRAFT",
      businessType: "Retail",
      location: { city: "Austin", state: "TX", country: "US", visibility: "SHOW_STATE_ONLY" },
    };
    expectDry(await dryRunThenPut(`/partner/v1/listings/${minimal}`, minimalBody), "wouldCreate", [
      "brokerExternalId",
      "businessType",
      "location.city",
      "location.country",
      "location.state",
      "location.visibility",
      "status",
    ]);
    expectDry(await dryRunThenPut(`/partner/v1/listings/${minimal}`, minimalBody), "noChange", []);

    const full = uniqueName("full");
    const fullBody = sample.listing(brokerA, {
      establishedAt: "2015-06-01T00:00:00-05:00",
      property: {
        propertyKind: "RENTED",
        areaSqft: 2400,
        rentData: { amount: 6500, frequency: "MONTHLY", leaseRenewable: true, leaseExpiration: "2030-01-01T00:00:00Z" },
      },
    });
    expectDry(await dryRunThenPut(`/partner/v1/listings/${full}`, fullBody), "wouldCreate");
    // The same instant written differently is the same value: no change.
    expectDry(
      await dryRunThenPut(`/partner/v1/listings/${full}`, { establishedAt: "2015-06-01T05:00:00Z" }),
      "noChange",
      [],
    );
    // Nested objects: only the changed fields are sent.
    expectDry(
      await dryRunThenPut(`/partner/v1/listings/${full}`, { financials: { askingPrice: 425000 } }),
      "wouldUpdate",
      ["financials.askingPrice"],
    );
    expectDry(
      await dryRunThenPut(`/partner/v1/listings/${full}`, { property: { rentData: { amount: 7000 } } }),
      "wouldUpdate",
      ["property.rentData.amount"],
    );
    // Arrays replace the whole list.
    expectDry(
      await dryRunThenPut(`/partner/v1/listings/${full}`, {
        photos: [{ url: "https://images.example.com/new.jpg", sortKey: 1 }],
      }),
      "wouldUpdate",
      ["photos"],
    );
    // null clears; a nested null removes one field.
    expectDry(
      await dryRunThenPut(`/partner/v1/listings/${full}`, { title: null, financials: { sde: null } }),
      "wouldUpdate",
      ["financials.sde", "title"],
    );
    // Changing brokerExternalId reassigns the listing.
    expectDry(await dryRunThenPut(`/partner/v1/listings/${full}`, { brokerExternalId: brokerB }), "wouldUpdate", [
      "brokerExternalId",
    ]);

    // Inline brokers: a new one is created with the listing; an existing one is updated with it.
    const inline = uniqueName("inline");
    const newBroker = uniqueName("broker-inline");
    const created = await dryRunThenPut(`/partner/v1/listings/${inline}`, {
      ...sample.listing(newBroker),
      brokerExternalId: undefined,
      broker: { externalBrokerId: newBroker, name: "Ina Line", email: "ina@example.com" },
    });
    expectDry(created, "wouldCreate");
    expect(created.dry.body.changedPaths).toContain("broker.name");
    expect(created.dry.body.changedPaths).toContain("brokerExternalId");
    // Only the inline broker changes: the listing stays as it is.
    const brokerOnly = await dryRunThenPut(
      `/partner/v1/listings/${inline}`,
      { broker: { externalBrokerId: newBroker, name: "Ina Line", email: "ina@example.com", phone: "+1 512 555 0123" } },
      { inlineBrokerOnly: true },
    );
    expectDry(brokerOnly, "wouldUpdate", ["broker.phone"]);
    // An inline broker naming another existing broker reassigns the listing to it, and updates that broker.
    expectDry(
      await dryRunThenPut(`/partner/v1/listings/${inline}`, {
        broker: { externalBrokerId: brokerB, name: "Bob Broker", email: "bob@example.com", phone: "+1 512 555 0999" },
      }),
      "wouldUpdate",
      ["broker.phone", "brokerExternalId"],
    );

    // Refusals: the same 400 / 404, and nothing written.
    const refusals: [unknown, number][] = [
      [{ status: "LIVE" }, 400], // an invalid status value
      [{ status: null }, 400], // null on a required field
      [{ brokerExternalId: uniqueName("nobody") }, 404], // a broker that does not exist
      [
        {
          photos: [
            { url: "https://images.example.com/a.jpg", sortKey: 1 },
            { url: "https://images.example.com/a.jpg", sortKey: 2 },
          ],
        },
        400,
      ],
      [
        {
          brokerExternalId: brokerA,
          broker: { externalBrokerId: brokerB, name: "Bob Broker", email: "bob@example.com" },
        },
        400,
      ],
      [{ financials: { askingPrice: -1 } }, 400],
    ];
    for (const [body, status] of refusals)
      expect((await dryRunThenPut(`/partner/v1/listings/${full}`, body)).dry.status).toBe(status);
    // A create without its required parts lists them all.
    const incomplete = await dryRunThenPut(`/partner/v1/listings/${uniqueName("incomplete")}`, {
      title: "Only a title",
    });
    expect(incomplete.dry.status).toBe(400);
    expect(incomplete.dry.body.details.map((d: { path: string }) => d.path)).toEqual([
      "brokerExternalId",
      "status",
      "businessType",
      "location",
    ]);
  });

  test("listings: every status move of the spec's transition table, and the status-only update", async () => {
    const id = uniqueName("moves");
    expectDry(
      await dryRunThenPut(`/partner/v1/listings/${id}`, sample.listing(brokerA, { status: "DRAFT" })),
      "wouldCreate",
    );
    const moves = [
      "FOR_SALE",
      "REVIEWING_OFFERS",
      "PENDING_CONTRACT",
      "UNDER_CONTRACT",
      "SOLD",
      "UNDER_CONTRACT",
      "FOR_SALE",
      "ARCHIVED",
      "FOR_SALE",
      "PENDING_CONTRACT",
      "FOR_SALE",
      "REVIEWING_OFFERS",
      "FOR_SALE",
    ];
    for (const status of moves) {
      // "One sample status-only update omits businessType and location."
      expectDry(await dryRunThenPut(`/partner/v1/listings/${id}`, { status }), "wouldUpdate", ["status"]);
      expectDry(await dryRunThenPut(`/partner/v1/listings/${id}`, { status }), "noChange", []);
    }
  });
});

describe("dry runs write and emit nothing", () => {
  test("a burst of dry runs (creates, updates, repeats, refusals) leaves the database as it was and puts nothing on Kafka", async () => {
    const brokerId = uniqueName("burst-broker");
    expect((await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
    const listingId = uniqueName("burst-listing");
    expect((await partner.put(`/partner/v1/listings/${listingId}`, sample.listing(brokerId))).status).toBe(201);
    // Let the relay publish the real writes first: what follows must add nothing.
    await waitForOutboxIdle();
    const before = await snapshot();
    const ends = await topicEnds(api.kafka, TOPICS);

    const dry = (path: string, body: unknown) =>
      call(api.baseUrl, "PUT", `${path}?dryRun=true`, { key: partner.apiKey, body });
    const answers = await Promise.all([
      dry(`/partner/v1/brokers/${uniqueName("new")}`, sample.broker()),
      dry(`/partner/v1/brokers/${brokerId}`, sample.broker({ phone: "+1 512 555 0777" })),
      dry(`/partner/v1/brokers/${brokerId}`, sample.broker()),
      dry(`/partner/v1/listings/${uniqueName("new")}`, sample.listing(brokerId)),
      dry(`/partner/v1/listings/${listingId}`, { status: "SOLD", financials: { askingPrice: 1 } }),
      dry(`/partner/v1/listings/${listingId}`, sample.listing(brokerId)),
      dry(`/partner/v1/listings/${listingId}`, {
        broker: { externalBrokerId: uniqueName("inline"), name: "New", email: "new@example.com" },
      }),
      dry(`/partner/v1/listings/${listingId}`, { status: "NOPE" }),
    ]);
    expect(answers.map((a) => a.body.outcome ?? a.status)).toEqual([
      "wouldCreate",
      "wouldUpdate",
      "noChange",
      "wouldCreate",
      "wouldUpdate",
      "noChange",
      "wouldUpdate",
      400,
    ]);
    expect(await snapshot()).toEqual(before);

    // A real change afterwards marks the end: once its event is on Kafka, anything the dry runs emitted would be too.
    const marker = await partner.put(`/partner/v1/listings/${listingId}`, { title: "Marker" });
    expect(marker.status).toBe(200);
    await waitForOutboxIdle();
    const after = await topicEnds(api.kafka, TOPICS);
    const mine = (await messagesBetween(api.kafka, ends, after)).filter((m) => m.partnerId === partner.partnerId);
    expect(mine.map((m) => [m.type, m.aggregateId, m.payload.title])).toEqual([
      ["listing.upserted", String(marker.body.serviceListingId), "Marker"],
    ]);
  });

  test("every event of this partner on Kafka is a real PUT's change: one per change-history entry, none from dry runs", async () => {
    await waitForOutboxIdle();
    const mine = (await messagesBetween(api.kafka, startEnds, await topicEnds(api.kafka, TOPICS))).filter(
      (m) => m.partnerId === partner.partnerId,
    );
    const history = await api.sql`
      SELECT 'listing' AS t, h.listing_id::text AS id, h.version FROM listing_history h JOIN listings l ON l.id = h.listing_id WHERE l.partner_id = ${partner.partnerId}
      UNION ALL SELECT 'broker', h.broker_id::text, h.version FROM broker_history h JOIN brokers b ON b.id = h.broker_id WHERE b.partner_id = ${partner.partnerId}`;
    const key = (t: string, id: string, v: number) => `${t}:${id}:${v}`;
    expect(mine.map((m) => key(m.aggregateType, m.aggregateId, m.version)).sort()).toEqual(
      history.map((h) => key(h.t, h.id, h.version)).sort(),
    );
  });
});

describe("dryRun query parameter", () => {
  test("dryRun=false is a normal PUT; any other value is a 400 and nothing is written", async () => {
    const id = uniqueName("flag");
    const brokerId = uniqueName("flag-broker");
    expect(
      (
        await call(api.baseUrl, "PUT", `/partner/v1/brokers/${brokerId}?dryRun=false`, {
          key: partner.apiKey,
          body: sample.broker(),
        })
      ).status,
    ).toBe(201);
    const before = await snapshot();
    for (const value of ["yes", "1", "TRUE", "", "true&dryRun=true"]) {
      const res = await call(api.baseUrl, "PUT", `/partner/v1/listings/${id}?dryRun=${value}`, {
        key: partner.apiKey,
        body: sample.listing(brokerId),
      });
      expect({ value, status: res.status, body: res.body }).toEqual({
        value,
        status: 400,
        body: { status: "error", error: "Invalid query parameters: dryRun must be true or false" },
      });
    }
    expect(await snapshot()).toEqual(before);
  });

  test("without a key a dry run is 401 like any PUT", async () => {
    const res = await call(api.baseUrl, "PUT", `/partner/v1/brokers/${uniqueName("b")}?dryRun=true`, {
      body: sample.broker(),
    });
    expect(res.status).toBe(401);
  });
});

async function waitForOutboxIdle(timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] =
      await api.sql`SELECT count(*)::int AS n FROM outbox WHERE payload->>'partnerId' = ${partner.partnerId} AND published_at IS NULL`;
    if (row!.n === 0) return;
    if (Date.now() > deadline) throw new Error("outbox not drained");
    await Bun.sleep(50);
  }
}
