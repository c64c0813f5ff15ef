// Brokers as a partner sees them: PUT to create or update, GET to read back, and paging for reconciliation.
// Runs the real API against the real PostgreSQL, Redis and Kafka from the test setup.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Topics } from "@pss/contracts";
import { uniqueName } from "../../../test/support/env.ts";
import { call, sample, startApi, type ApiHarness, type Partner, type TestResponse } from "./support/harness.ts";
import { allRecords } from "./support/record-pages.ts";

const PROFILE_BASE = "https://market.example.test/brokers/";

let api: ApiHarness;
let partner: Partner;

beforeAll(async () => {
  api = await startApi();
  partner = await api.createPartner();
});
afterAll(async () => {
  await api.stop();
});

const newId = () => uniqueName("broker");
const path = (externalId: string) => `/partner/v1/brokers/${externalId}`;

interface BrokerRow {
  id: string;
  version: number;
  updated_at: Date;
  content_hash: Buffer;
  name: string;
  email: string;
  phone: string | null;
}

async function brokerRow(p: Partner, externalId: string): Promise<BrokerRow | undefined> {
  const [row] = await api.sql<BrokerRow[]>`
    SELECT id::text AS id, version, updated_at, content_hash, name, email, phone
    FROM brokers WHERE partner_id = ${p.partnerId} AND external_id = ${externalId}`;
  return row;
}

async function brokerEventCount(serviceBrokerId: string): Promise<number> {
  const [row] = await api.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM outbox WHERE topic = ${Topics.brokerEvents.name} AND message_key = ${serviceBrokerId}`;
  return row!.n;
}

async function brokerCount(p: Partner): Promise<number> {
  const [row] = await api.sql<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM brokers WHERE partner_id = ${p.partnerId}`;
  return row!.n;
}

async function created(
  p: Partner,
  externalId: string,
  body: unknown = sample.broker(),
): Promise<{ serviceBrokerId: string; serviceProfileUrl: string }> {
  const res = await p.put(path(externalId), body);
  if (res.status !== 201)
    throw new Error(`expected 201 creating ${externalId}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

async function readBack(p: Partner, externalId: string) {
  const res = await p.get(path(externalId));
  expect(res.status).toBe(200);
  expect(res.body.status).toBe("success");
  return res.body.broker;
}

/** A 400 in the error shape whose one-sentence message and details both name the field. */
function expectValidationError(res: TestResponse, fieldPath: string) {
  expect(res.status).toBe(400);
  expect(res.body.status).toBe("error");
  expect(typeof res.body.error).toBe("string");
  expect(res.body.error).toContain(fieldPath);
  expect(res.body.error).not.toContain("\n");
  expect(Array.isArray(res.body.details)).toBe(true);
  expect(res.body.details.length).toBeGreaterThan(0);
  for (const d of res.body.details) {
    expect(typeof d.path).toBe("string");
    expect(typeof d.message).toBe("string");
  }
  expect(res.body.details.map((d: { path: string }) => d.path)).toContain(fieldPath);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("PUT /partner/v1/brokers/{externalBrokerId}", () => {
  test("a new external ID creates the broker: 201 with its service ID and public profile URL", async () => {
    const externalId = newId();
    const res = await partner.put(path(externalId), sample.broker());
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      status: "success",
      message: "Broker created",
      serviceBrokerId: expect.any(String),
      serviceProfileUrl: expect.any(String),
      // The sample broker has everything but a photo.
      warnings: [{ path: "avatarUrl", code: "AVATAR_MISSING", message: expect.any(String) }],
      qualityScore: 70,
    });
    expect(res.body.serviceBrokerId.length).toBeGreaterThan(0);
    expect(res.body.serviceProfileUrl).toBe(PROFILE_BASE + res.body.serviceBrokerId);
    const row = await brokerRow(partner, externalId);
    expect(row?.id).toBe(res.body.serviceBrokerId);
    expect(await brokerEventCount(res.body.serviceBrokerId)).toBe(1);
  });

  test("a known external ID updates the same broker: 200 'Broker updated' with the same ID and URL", async () => {
    const externalId = newId();
    const first = await created(partner, externalId);
    const res = await partner.put(path(externalId), sample.broker({ name: "Jane Q. Broker" }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: "success",
      message: "Broker updated",
      serviceBrokerId: first.serviceBrokerId,
      serviceProfileUrl: first.serviceProfileUrl,
      warnings: [{ path: "avatarUrl", code: "AVATAR_MISSING", message: expect.any(String) }],
      qualityScore: 70,
    });
    expect((await readBack(partner, externalId)).name).toBe("Jane Q. Broker");
    expect((await brokerRow(partner, externalId))!.version).toBe(2);
    expect(await brokerEventCount(first.serviceBrokerId)).toBe(2);
  });

  test("repeating an identical request answers 200 with the same IDs and changes nothing (no new version, no event)", async () => {
    const externalId = newId();
    const first = await created(partner, externalId);
    const before = (await brokerRow(partner, externalId))!;
    const eventsBefore = await brokerEventCount(first.serviceBrokerId);
    await sleep(20); // would show up in updated_at if the repeat wrote anything

    const again = await partner.put(path(externalId), sample.broker());
    expect(again.status).toBe(200);
    expect(again.body).toEqual({
      status: "success",
      message: "Broker updated",
      serviceBrokerId: first.serviceBrokerId,
      serviceProfileUrl: first.serviceProfileUrl,
      warnings: [{ path: "avatarUrl", code: "AVATAR_MISSING", message: expect.any(String) }],
      qualityScore: 70,
    });

    const after = (await brokerRow(partner, externalId))!;
    expect(after.version).toBe(before.version);
    expect(after.updated_at.getTime()).toBe(before.updated_at.getTime());
    expect(after.content_hash.equals(before.content_hash)).toBe(true);
    expect(await brokerEventCount(first.serviceBrokerId)).toBe(eventsBefore);
  });

  test("a repeat with the same content in a different key order is also recognised as identical", async () => {
    const externalId = newId();
    const first = await created(partner, externalId);
    const before = (await brokerRow(partner, externalId))!;
    const body = sample.broker();
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const again = await partner.put(path(externalId), reordered);
    expect(again.status).toBe(200);
    expect((await brokerRow(partner, externalId))!.version).toBe(before.version);
    expect(await brokerEventCount(first.serviceBrokerId)).toBe(1);
  });
});

describe("concurrent PUTs", () => {
  test("the same new broker sent several times at once is created exactly once: one 201, the rest 200 with the same ID", async () => {
    const externalId = newId();
    const responses = await Promise.all(
      Array.from({ length: 6 }, () => partner.put(path(externalId), sample.broker())),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 200, 201]);
    const ids = new Set(responses.map((r) => r.body.serviceBrokerId));
    expect(ids.size).toBe(1);
    const row = (await brokerRow(partner, externalId))!;
    expect(row.version).toBe(1);
    expect(await brokerEventCount(row.id)).toBe(1);
  });
});

describe("GET /partner/v1/brokers/{externalBrokerId}", () => {
  test("reads back the broker exactly as stored, with no avatar when no avatarUrl was sent", async () => {
    const externalId = newId();
    const put = await created(partner, externalId);
    const broker = await readBack(partner, externalId);
    const body = sample.broker();
    expect(broker).toEqual({
      externalBrokerId: externalId,
      serviceBrokerId: put.serviceBrokerId,
      serviceProfileUrl: put.serviceProfileUrl,
      mode: "live",
      officeId: partner.officeId,
      name: body.name,
      email: body.email,
      phone: body.phone,
      avatarUrl: null,
      forwardingEmail: body.forwardingEmail,
      profile: body.profile,
      licenses: body.licenses,
      serviceAreas: body.serviceAreas,
      avatar: null,
      warnings: [{ path: "avatarUrl", code: "AVATAR_MISSING", message: expect.any(String) }],
      qualityScore: 70,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(new Date(broker.createdAt).toISOString()).toBe(broker.createdAt);
    expect(new Date(broker.updatedAt).toISOString()).toBe(broker.updatedAt);
    expect(Math.abs(Date.parse(broker.createdAt) - Date.now())).toBeLessThan(60_000);
  });

  test("after an avatarUrl is set the avatar shows as pending processing", async () => {
    const externalId = newId();
    await created(partner, externalId);
    const res = await partner.put(
      path(externalId),
      sample.broker({ avatarUrl: "https://images.example.com/jane.jpg" }),
    );
    expect(res.status).toBe(200);
    const broker = await readBack(partner, externalId);
    expect(broker.avatarUrl).toBe("https://images.example.com/jane.jpg");
    expect(broker.avatar).toEqual({
      url: "https://images.example.com/jane.jpg",
      state: "pending",
      failureReason: null,
      warning: null,
      width: null,
      height: null,
      variants: [],
    });
  });

  test("an unknown external ID is 404 'Broker not found'", async () => {
    const res = await partner.get(path(newId()));
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ status: "error", error: "Broker not found" });
  });
});

describe("update semantics (JSON Merge Patch)", () => {
  test("licenses and serviceAreas replace the whole list: omitted items are removed", async () => {
    const externalId = newId();
    await created(
      partner,
      externalId,
      sample.broker({
        licenses: [
          { licenseNumber: "TX-1", state: "TX", country: "US" },
          { licenseNumber: "CA-2", state: "CA", country: "US" },
        ],
        serviceAreas: [
          { city: "Austin", state: "TX", country: "US" },
          { county: "Travis", state: "TX", country: "US" },
          { state: "CA", country: "US" },
        ],
      }),
    );
    const res = await partner.put(
      path(externalId),
      sample.broker({
        licenses: [{ licenseNumber: "CA-2", state: "CA", country: "US" }],
        serviceAreas: [{ city: "Toronto", state: "ON", country: "CA" }],
      }),
    );
    expect(res.status).toBe(200);
    const broker = await readBack(partner, externalId);
    expect(broker.licenses).toEqual([{ licenseNumber: "CA-2", state: "CA", country: "US" }]);
    expect(broker.serviceAreas).toEqual([{ city: "Toronto", state: "ON", country: "CA" }]);
  });

  test("list order is kept as sent", async () => {
    const externalId = newId();
    const areas = [
      { state: "WY", country: "US" },
      { city: "Boise", state: "ID", country: "US" },
      { county: "Ada", state: "ID", country: "US" },
    ];
    await created(partner, externalId, sample.broker({ serviceAreas: areas }));
    expect((await readBack(partner, externalId)).serviceAreas).toEqual(areas);
  });

  test("omitted top-level optional fields keep their stored values", async () => {
    const externalId = newId();
    await created(partner, externalId, sample.broker({ avatarUrl: "https://images.example.com/a.jpg" }));
    const res = await partner.put(path(externalId), { name: "Renamed Broker", email: "renamed@example.com" });
    expect(res.status).toBe(200);
    const broker = await readBack(partner, externalId);
    const original = sample.broker();
    expect(broker.name).toBe("Renamed Broker");
    expect(broker.email).toBe("renamed@example.com");
    expect(broker.phone).toBe(original.phone);
    expect(broker.forwardingEmail).toBe(original.forwardingEmail);
    expect(broker.avatarUrl).toBe("https://images.example.com/a.jpg");
    expect(broker.profile).toEqual(original.profile);
    expect(broker.licenses).toEqual(original.licenses);
    expect(broker.serviceAreas).toEqual(original.serviceAreas);
  });

  test("profile merges field by field: only the sent fields change", async () => {
    const externalId = newId();
    await created(partner, externalId);
    const res = await partner.put(
      path(externalId),
      sample.broker({ profile: { linkedInUrl: "https://www.linkedin.com/in/jane" } }),
    );
    expect(res.status).toBe(200);
    expect((await readBack(partner, externalId)).profile).toEqual({
      bio: "Twenty years selling Texas businesses.",
      website: "https://jane.example.com",
      linkedInUrl: "https://www.linkedin.com/in/jane",
    });
  });

  test("an explicit null clears a field: phone, a profile field, a whole list", async () => {
    const externalId = newId();
    await created(partner, externalId);
    const res = await partner.put(
      path(externalId),
      sample.broker({ phone: null, profile: { bio: null }, licenses: null }),
    );
    expect(res.status).toBe(200);
    const broker = await readBack(partner, externalId);
    expect(broker.phone).toBeNull();
    expect(broker.profile).toEqual({ website: "https://jane.example.com" });
    expect(broker.licenses).toEqual([]);
    expect(broker.serviceAreas).toEqual(sample.broker().serviceAreas);
    const row = (await brokerRow(partner, externalId))!;
    expect(row.phone).toBeNull();
    const [licenses] = await api.sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM broker_licenses WHERE broker_id = ${row.id}`;
    expect(licenses!.n).toBe(0);
  });

  test("clearing the avatarUrl removes the avatar from the read-back", async () => {
    const externalId = newId();
    await created(partner, externalId, sample.broker({ avatarUrl: "https://images.example.com/a.jpg" }));
    expect((await partner.put(path(externalId), sample.broker({ avatarUrl: null }))).status).toBe(200);
    const broker = await readBack(partner, externalId);
    expect(broker.avatarUrl).toBeNull();
    expect(broker.avatar).toBeNull();
  });

  test("clearing every profile field reads back as an empty profile, and a second identical clear changes nothing", async () => {
    const externalId = newId();
    await created(partner, externalId);
    const clear = sample.broker({ profile: { bio: null, website: null } });
    expect((await partner.put(path(externalId), clear)).status).toBe(200);
    expect((await readBack(partner, externalId)).profile).toEqual({});
    const version = (await brokerRow(partner, externalId))!.version;
    expect((await partner.put(path(externalId), clear)).status).toBe(200);
    expect((await brokerRow(partner, externalId))!.version).toBe(version);
  });

  for (const field of ["name", "email"] as const) {
    test(`${field} is still required on update: 400 naming ${field}, and the broker is unchanged`, async () => {
      const externalId = newId();
      await created(partner, externalId);
      const before = (await brokerRow(partner, externalId))!;
      const body: Record<string, unknown> = sample.broker({ phone: "+1 512 555 0199" });
      delete body[field];
      const res = await partner.put(path(externalId), body);
      expectValidationError(res, field);
      const after = (await brokerRow(partner, externalId))!;
      expect(after.version).toBe(before.version);
      expect(after.phone).toBe(sample.broker().phone);
    });
  }
});

describe("validation", () => {
  const invalidBodies: { name: string; body: Record<string, unknown>; field: string }[] = [
    { name: "a malformed email", body: sample.broker({ email: "jane.example.com" }), field: "email" },
    {
      name: "a malformed forwardingEmail",
      body: sample.broker({ forwardingEmail: "leads at crm" }),
      field: "forwardingEmail",
    },
    { name: "an ftp avatarUrl", body: sample.broker({ avatarUrl: "ftp://x" }), field: "avatarUrl" },
    { name: "an avatarUrl that is not a URL", body: sample.broker({ avatarUrl: "not a url" }), field: "avatarUrl" },
    {
      name: "a profile website that is not http(s)",
      body: sample.broker({ profile: { website: "javascript:alert(1)" } }),
      field: "profile.website",
    },
    {
      name: "a lowercase license country code",
      body: sample.broker({ licenses: [{ licenseNumber: "X1", state: "TX", country: "us" }] }),
      field: "licenses[0].country",
    },
    {
      name: "an unknown license country code",
      body: sample.broker({ licenses: [{ licenseNumber: "X1", state: "TX", country: "XX" }] }),
      field: "licenses[0].country",
    },
    {
      name: "a service area with only a country",
      body: sample.broker({ serviceAreas: [{ city: "Austin", country: "US" }, { country: "US" }] }),
      field: "serviceAreas[1]",
    },
    { name: "a misspelt field", body: { ...sample.broker(), nmae: "Jane" }, field: "nmae" },
    { name: "a name that is a number", body: sample.broker({ name: 5 }), field: "name" },
    { name: "an empty name", body: sample.broker({ name: "" }), field: "name" },
    { name: "a null name", body: sample.broker({ name: null }), field: "name" },
    {
      name: "licenses that are not an array",
      body: sample.broker({ licenses: { licenseNumber: "X1" } }),
      field: "licenses",
    },
  ];

  for (const { name, body, field } of invalidBodies) {
    test(`${name} is refused on create with 400 naming ${field}, and no broker is created`, async () => {
      const externalId = newId();
      const res = await partner.put(path(externalId), body);
      expectValidationError(res, field);
      expect(await brokerRow(partner, externalId)).toBeUndefined();
    });
  }

  test("an invalid update is refused with 400 and leaves the stored broker exactly as it was", async () => {
    const externalId = newId();
    const { serviceBrokerId } = await created(partner, externalId);
    const before = await readBack(partner, externalId);
    const rowBefore = (await brokerRow(partner, externalId))!;

    for (const { body, field } of invalidBodies) {
      // Otherwise-valid changes ride along, so a partial write would be visible.
      const res = await partner.put(path(externalId), {
        ...body,
        phone: "+44 20 7946 0000",
        licenses: body.licenses ?? [],
      });
      expectValidationError(res, field);
    }

    expect(await readBack(partner, externalId)).toEqual(before);
    const rowAfter = (await brokerRow(partner, externalId))!;
    expect(rowAfter.version).toBe(rowBefore.version);
    expect(rowAfter.updated_at.getTime()).toBe(rowBefore.updated_at.getTime());
    expect(await brokerEventCount(serviceBrokerId)).toBe(1);
  });

  test("the error sentence for a misspelt field names it as unknown", async () => {
    const res = await partner.put(path(newId()), { ...sample.broker(), nmae: "Jane" });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      status: "error",
      error: "nmae: is not a known field",
      details: [{ path: "nmae", message: "is not a known field" }],
    });
  });

  test("several problems are all listed in details, the sentence names the first and counts the rest", async () => {
    const res = await partner.put(path(newId()), sample.broker({ email: "nope", avatarUrl: "ftp://x" }));
    expect(res.status).toBe(400);
    const paths = res.body.details.map((d: { path: string }) => d.path).sort();
    expect(paths).toEqual(["avatarUrl", "email"]);
    expect(res.body.error).toMatch(/\(and 1 more problem, see details\)$/);
  });

  test("a body that is not an object is refused with 400", async () => {
    const externalId = newId();
    const res = await partner.put(path(externalId), [sample.broker()]);
    expect(res.status).toBe(400);
    expect(res.body.status).toBe("error");
    expect(typeof res.body.error).toBe("string");
    expect(await brokerRow(partner, externalId)).toBeUndefined();
  });

  describe("externalBrokerId in the path", () => {
    async function expectRejectedId(rawPathSegment: string) {
      const before = await brokerCount(partner);
      const res = await partner.put(path(rawPathSegment), sample.broker());
      expect(res.status).toBe(400);
      expect(res.body.status).toBe("error");
      expect(res.body.error).toContain("externalBrokerId");
      expect(await brokerCount(partner)).toBe(before);
      const get = await partner.get(path(rawPathSegment));
      expect(get.status).toBe(400);
      expect(get.body.error).toContain("externalBrokerId");
    }

    test("an ID of 128 characters is accepted", async () => {
      const id = "a".repeat(120) + Math.random().toString(36).slice(2, 10).padEnd(8, "x");
      expect(id).toHaveLength(128);
      expect((await partner.put(path(id), sample.broker())).status).toBe(201);
      expect((await readBack(partner, id)).externalBrokerId).toBe(id);
    });

    test("an ID of 129 characters is refused with 400", async () => {
      await expectRejectedId("b".repeat(129));
    });

    test("an ID with a leading space is refused with 400", async () => {
      await expectRejectedId(`%20lead-${Date.now()}`);
    });

    test("an ID with a trailing space is refused with 400", async () => {
      await expectRejectedId(`trail-${Date.now()}%20`);
    });

    test("an ID with a control character is refused with 400", async () => {
      await expectRejectedId(`ctl%01-${Date.now()}`);
    });

    test("IDs are case-sensitive: abc and ABC are two different brokers", async () => {
      const p = await api.createPartner();
      const lower = await p.put(path("abc"), sample.broker({ name: "Lower Case" }));
      const upper = await p.put(path("ABC"), sample.broker({ name: "Upper Case" }));
      expect(lower.status).toBe(201);
      expect(upper.status).toBe(201);
      expect(upper.body.serviceBrokerId).not.toBe(lower.body.serviceBrokerId);
      expect((await readBack(p, "abc")).name).toBe("Lower Case");
      expect((await readBack(p, "ABC")).name).toBe("Upper Case");
    });

    test("a percent-encoded ID is stored decoded and can be read back", async () => {
      const p = await api.createPartner();
      const res = await p.put(path("office%2F42%20jane"), sample.broker());
      expect(res.status).toBe(201);
      const broker = await readBack(p, "office%2F42%20jane");
      expect(broker.externalBrokerId).toBe("office/42 jane");
      expect(broker.serviceBrokerId).toBe(res.body.serviceBrokerId);
    });
  });
});

describe("malformed percent-encoding", () => {
  test("a broken escape in an ID is refused instead of being merged with other IDs", async () => {
    for (const raw of ["%", "%FF", "a%2"]) {
      const res = await partner.put(path(raw), sample.broker());
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ status: "error", error: "externalBrokerId is not valid percent-encoded UTF-8" });
    }
  });
});

describe("partner isolation", () => {
  test("another partner cannot read a broker: 404 'Broker not found'", async () => {
    const externalId = newId();
    await created(partner, externalId);
    const other = await api.createPartner();
    const res = await other.get(path(externalId));
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ status: "error", error: "Broker not found" });
  });

  test("another partner's PUT of the same external ID creates its own broker and leaves the first untouched", async () => {
    const externalId = newId();
    const mine = await created(partner, externalId);
    const before = await readBack(partner, externalId);
    const rowBefore = (await brokerRow(partner, externalId))!;

    const other = await api.createPartner();
    const theirs = await other.put(
      path(externalId),
      sample.broker({ name: "Someone Else", email: "else@example.org", phone: null }),
    );
    expect(theirs.status).toBe(201);
    expect(theirs.body.message).toBe("Broker created");
    expect(theirs.body.serviceBrokerId).not.toBe(mine.serviceBrokerId);

    expect(await readBack(partner, externalId)).toEqual(before);
    expect((await brokerRow(partner, externalId))!.version).toBe(rowBefore.version);
    const theirsRead = await readBack(other, externalId);
    expect(theirsRead.name).toBe("Someone Else");
    expect(theirsRead.officeId).toBe(other.officeId);
  });
});

describe("GET /partner/v1/brokers (paging)", () => {
  let pager: Partner;
  const ids: string[] = [];

  beforeAll(async () => {
    pager = await api.createPartner();
    for (let i = 0; i < 5; i++) {
      const id = `page-${i}-${newId()}`;
      await created(pager, id, sample.broker({ name: `Broker ${i}` }));
      ids.push(id);
      await sleep(5); // distinct updated_at values (millisecond precision)
    }
    // Another partner's brokers must never show up.
    const stranger = await api.createPartner();
    await created(stranger, `stranger-${newId()}`);
  });

  const list = (query: string, p: Partner = pager) =>
    call(api.baseUrl, "GET", `/partner/v1/brokers${query}`, { key: p.apiKey });

  async function allPages(limit: number, extra = "") {
    const pages: any[][] = [];
    let cursor: string | null = null;
    do {
      const res: TestResponse = await list(
        `?limit=${limit}${extra}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      expect(res.status).toBe(200);
      expect(res.body.status).toBe("success");
      expect(res.body.results.length).toBeLessThanOrEqual(limit);
      pages.push(res.body.results);
      cursor = res.body.nextCursor;
      if (pages.length > 20) throw new Error("paging does not end");
    } while (cursor !== null);
    return pages;
  }

  const ordered = (records: { updatedAt: string; serviceBrokerId: string }[]) =>
    [...records].sort(
      (a, b) =>
        Date.parse(a.updatedAt) - Date.parse(b.updatedAt) ||
        Number(BigInt(a.serviceBrokerId) - BigInt(b.serviceBrokerId)),
    );

  test("following nextCursor with limit=2 visits every broker exactly once, ordered by updatedAt then id", async () => {
    const pages = await allPages(2);
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    const records = pages.flat();
    expect(records.map((r) => r.externalBrokerId).sort()).toEqual([...ids].sort());
    expect(records).toEqual(ordered(records));
    expect(records.map((r) => r.externalBrokerId)).toEqual(ids);
    const one = records.find((r) => r.externalBrokerId === ids[2]);
    expect(one).toEqual(await readBack(pager, ids[2]!));
  });

  test("when the last page is exactly full, one more request returns an empty page and a null cursor", async () => {
    const first = await list("?limit=5");
    expect(first.body.results).toHaveLength(5);
    expect(typeof first.body.nextCursor).toBe("string");
    const next = await list(`?limit=5&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(next.status).toBe(200);
    expect(next.body).toEqual({ status: "success", results: [], nextCursor: null });
  });

  test("without a limit all brokers come back on one page", async () => {
    const res = await list("");
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { externalBrokerId: string }) => r.externalBrokerId)).toEqual(ids);
    expect(res.body.nextCursor).toBeNull();
  });

  test("updatedSince returns only brokers updated at or after that instant", async () => {
    const all = (await list("")).body.results as { externalBrokerId: string; updatedAt: string }[];
    const since = all[2]!.updatedAt;
    const res = await list(`?updatedSince=${encodeURIComponent(since)}`);
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { externalBrokerId: string }) => r.externalBrokerId)).toEqual(ids.slice(2));
    const future = await list(`?updatedSince=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}`);
    expect(future.body).toEqual({ status: "success", results: [], nextCursor: null });
    const offset = await list(`?updatedSince=${encodeURIComponent("2000-01-01T00:00:00+02:00")}`);
    expect(offset.body.results).toHaveLength(5);
    // 0000-12-31T22:28Z after its offset: before anything stored, so every broker (PostgreSQL has no year 0).
    const yearZero = await list(`?updatedSince=${encodeURIComponent("0001-01-01T00:00:00+01:32")}`);
    expect(yearZero.status).toBe(200);
    expect(yearZero.body.results).toHaveLength(5);
  });

  test("updatedSince combines with paging", async () => {
    const all = (await list("")).body.results as { updatedAt: string }[];
    const pages = await allPages(2, `&updatedSince=${encodeURIComponent(all[1]!.updatedAt)}`);
    expect(pages.flat().map((r) => r.externalBrokerId)).toEqual(ids.slice(1));
  });

  test("an updated broker moves to the end of the order", async () => {
    const p = await api.createPartner();
    const [a, b] = [`a-${newId()}`, `b-${newId()}`];
    await created(p, a);
    await sleep(5);
    await created(p, b);
    await sleep(5);
    expect((await p.put(path(a), sample.broker({ name: "Moved" }))).status).toBe(200);
    // To the list's end: a first page stops before writes newer than any transaction still open on the server.
    const records = await allRecords((query) => list(query, p), "");
    expect(records.map((r: { externalBrokerId: string }) => r.externalBrokerId)).toEqual([b, a]);
  });

  test("a partner with no brokers gets an empty page", async () => {
    const empty = await api.createPartner();
    const res = await list("", empty);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "success", results: [], nextCursor: null });
  });

  const cursorOf = (at: string, id: string) => Buffer.from(JSON.stringify([at, id])).toString("base64url");
  const badQueries: [label: string, query: string, field: string][] = [
    ["limit=0", "limit=0", "limit"],
    ["limit=501", "limit=501", "limit"],
    ["limit=abc", "limit=abc", "limit"],
    ["limit=2.5", "limit=2.5", "limit"],
    ["limit=-1", "limit=-1", "limit"],
    ["an empty limit", "limit=", "limit"],
    ["a cursor that is not one of ours", "cursor=not-a-cursor", "cursor"],
    [
      "a tampered cursor with a non-numeric id",
      `cursor=${cursorOf("2024-01-01T00:00:00Z", "1; DROP TABLE brokers")}`,
      "cursor",
    ],
    [
      "a tampered cursor with an id beyond 64 bits",
      `cursor=${cursorOf("2024-01-01T00:00:00Z", "99999999999999999999")}`,
      "cursor",
    ],
    ["a tampered cursor dated year 0", `cursor=${cursorOf("0000-01-01T00:00:00Z", "1")}`, "cursor"],
    ["updatedSince=yesterday", "updatedSince=yesterday", "updatedSince"],
    ["updatedSince without a time zone", "updatedSince=2024-01-01T00:00:00", "updatedSince"],
    ["updatedSince as a bare date", "updatedSince=2024-01-01", "updatedSince"],
    ["updatedSince in year 0", "updatedSince=0000-01-01T00:00:00Z", "updatedSince"],
    ["an unknown query parameter", "sort=name", "sort"],
  ];
  for (const [label, query, field] of badQueries) {
    test(`${label} is refused with 400 naming ${field}`, async () => {
      const res = await list(`?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.status).toBe("error");
      expect(typeof res.body.error).toBe("string");
      expect(res.body.error).toContain(field);
      expect(res.body).not.toHaveProperty("results");
    });
  }

  test("limit=500 is the largest page size accepted", async () => {
    const res = await list("?limit=500");
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(5);
  });
});
