// GET /partner/v1/offices/{officeId}/leads/count and /organizations/{organizationId}/leads/count against the
// real PostgreSQL and Redis. Leads are seeded with exact created_at values through the leads service's own
// recorder (raw rows and buckets together), so the bounds can be checked to the millisecond.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createPartnerAdmin } from "../src/admin/partner-admin.ts";
import { recordLeads } from "../../leads/src/counting/count-recorder.ts";
import { call, startApi, type ApiHarness, type Partner } from "./support/harness.ts";
import { startLeadApp } from "./support/lead-app.ts";

const UNAUTHORIZED = { status: "error", error: "Unauthorized" };
const DATES_RULE = "Invalid query parameters: dates must be ISO 8601";

let api: ApiHarness;
let a: Partner; // lead tracking; offices a1 (default), a2, a3 (no leads)
let b: Partner; // lead tracking; another partner
let noPermission: Partner;
let a2: number;
let a3: number;
const seeded = new Map<number, number[]>(); // office -> created_at (ms) of its leads

async function seed(partner: Partner, officeId: number, times: (string | number)[]) {
  const ms = times.map((t) => (typeof t === "number" ? t : Date.parse(t)));
  await recordLeads(
    api.sql,
    ms.map((t) => ({
      leadId: crypto.randomUUID(),
      serviceListingId: 1,
      serviceBrokerId: "1",
      officeId,
      organizationId: partner.organizationId,
      createdAt: new Date(t).toISOString(),
    })),
  );
  seeded.set(officeId, [...(seeded.get(officeId) ?? []), ...ms]);
}

const expected = (officeId: number, start?: string, end?: string) =>
  (seeded.get(officeId) ?? []).filter(
    (t) => (start === undefined || t >= Date.parse(start)) && (end === undefined || t < Date.parse(end)),
  ).length;

function query(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams(
    Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined),
  ).toString();
  return q ? `?${q}` : "";
}
const officeCount = (p: Partner, officeId: number | string, params: Record<string, string | undefined> = {}) =>
  p.get(`/partner/v1/offices/${officeId}/leads/count${query(params)}`);
const orgCount = (p: Partner, orgId: number | string, params: Record<string, string | undefined> = {}) =>
  p.get(`/partner/v1/organizations/${orgId}/leads/count${query(params)}`);

// Edges of the ranges used below, and leads exactly on them and 1 ms either side.
const T = "2024-03-10T10:30:00.000Z";
const E = "2024-03-12T18:45:00.000Z";
const edgeTimes = [T, E].flatMap((x) => [Date.parse(x) - 1, Date.parse(x), Date.parse(x) + 1]);

beforeAll(async () => {
  api = await startApi({ relay: false });
  [a, b, noPermission] = await Promise.all([
    api.createPartner({ leadTracking: true }),
    api.createPartner({ leadTracking: true }),
    api.createPartner({ leadTracking: false }),
  ]);
  const admin = createPartnerAdmin({ sql: api.sql, redis: api.redis });
  a2 = (await admin.createOffice({ organizationId: a.organizationId, name: "Second office" })).officeId;
  a3 = (await admin.createOffice({ organizationId: a.organizationId, name: "Quiet office" })).officeId;

  await seed(a, a.officeId, [
    ...edgeTimes,
    "2024-03-11T00:00:00.000Z",
    "2024-03-11T23:59:59.999Z",
    "2024-03-11T10:00:00.000Z",
    "2023-12-31T23:59:59.999Z",
    "2024-01-01T00:00:00.000Z",
  ]);
  // Spread over two years at random milliseconds: ranges over them cross month, day and hour buckets.
  let s = 7;
  const rand = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const from = Date.parse("2023-01-01T00:00:00Z");
  await seed(
    a,
    a2,
    Array.from({ length: 400 }, () => from + Math.floor(rand() * 730 * 86_400_000)),
  );
  await seed(b, b.officeId, ["2024-03-11T12:00:00Z", "2024-03-11T12:00:01Z"]);
});
afterAll(() => api.stop());

describe("office count", () => {
  test("without dates: every lead of the office, with its ID and name", async () => {
    const res = await officeCount(a, a.officeId);
    expect(res.status).toBe(200);
    const [office] = await api.sql`SELECT name FROM offices WHERE id = ${a.officeId}`;
    expect(res.body).toEqual({
      status: "success",
      officeId: a.officeId,
      officeName: office!.name,
      totalLeads: expected(a.officeId),
    });
    expect(res.body.totalLeads).toBe(11);
  });

  test("startDate is inclusive and endDate exclusive, to the millisecond", async () => {
    const cases: [string | undefined, string | undefined, number][] = [
      [T, E, 6], // T, T+1ms, 3 leads on 11 March, E-1ms
      ["2024-03-10T10:30:00.001Z", "2024-03-12T18:45:00.001Z", 6], // T+1ms .. E
      ["2024-03-10T10:29:59.999Z", E, 7],
      [T, T, 0],
      [T, "2024-03-10T10:30:00.001Z", 1],
      ["2024-03-11T00:00:00Z", "2024-03-12T00:00:00Z", 3], // a whole day: midnight in, next midnight out
      ["2024-03-11T10:00:00Z", "2024-03-11T11:00:00Z", 1], // a whole hour
      ["2024-01-01T00:00:00Z", undefined, 10],
      [undefined, "2024-01-01T00:00:00Z", 1], // from the beginning
    ];
    for (const [startDate, endDate, n] of cases) {
      const res = await officeCount(a, a.officeId, { startDate, endDate });
      expect([startDate, endDate, res.status, res.body.totalLeads]).toEqual([startDate, endDate, 200, n]);
      expect(n).toBe(expected(a.officeId, startDate, endDate));
    }
  });

  test("a time-zone offset names the same instant as Z", async () => {
    const res = await officeCount(a, a.officeId, {
      startDate: "2024-03-10T12:30:00+02:00",
      endDate: "2024-03-12T13:45:00-05:00",
    });
    expect(res.body.totalLeads).toBe(6);
  });

  test("ranges over two years of leads match a count of the raw rows exactly", async () => {
    let s = 99;
    const rand = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const times = seeded.get(a2)!;
    for (let i = 0; i < 40; i++) {
      // Half the bounds land exactly on a lead, the rest anywhere.
      const pick = () =>
        rand() < 0.5
          ? times[Math.floor(rand() * times.length)]!
          : Date.parse("2022-12-01T00:00:00Z") + Math.floor(rand() * 800 * 86_400_000);
      const [x, y] = [pick(), pick()].sort((p, q) => p - q);
      const startDate = i % 7 === 0 ? undefined : new Date(x!).toISOString();
      const endDate = i % 5 === 0 ? undefined : new Date(y!).toISOString();
      const res = await officeCount(a, a2, { startDate, endDate });
      expect(res.body.totalLeads).toBe(expected(a2, startDate, endDate));
    }
  });
});

describe("organization count", () => {
  test("lists every office of the organization, zeros included, and totalLeads is their sum", async () => {
    const res = await orgCount(a, a.organizationId);
    expect(res.status).toBe(200);
    const [org] = await api.sql`SELECT name FROM organizations WHERE id = ${a.organizationId}`;
    const offices = await api.sql<
      { id: number; name: string }[]
    >`SELECT id, name FROM offices WHERE organization_id = ${a.organizationId} ORDER BY id`;
    expect(res.body).toEqual({
      status: "success",
      organizationId: a.organizationId,
      organizationName: org!.name,
      totalLeads: 411,
      officeBreakdown: offices.map((o) => ({ officeId: o.id, officeName: o.name, totalLeads: expected(o.id) })),
    });
    expect(res.body.officeBreakdown.map((o: any) => o.officeId)).toEqual([a.officeId, a2, a3]);
    expect(res.body.officeBreakdown.find((o: any) => o.officeId === a3).totalLeads).toBe(0);
  });

  test("dates apply to every office with the same bounds", async () => {
    const res = await orgCount(a, a.organizationId, { startDate: T, endDate: E });
    const breakdown = res.body.officeBreakdown.map((o: any) => o.totalLeads);
    expect(breakdown).toEqual([expected(a.officeId, T, E), expected(a2, T, E), 0]);
    expect(res.body.totalLeads).toBe(breakdown.reduce((x: number, y: number) => x + y, 0));
  });
});

describe("errors (spec section 7)", () => {
  const paths = () => [
    `/partner/v1/offices/${a.officeId}/leads/count`,
    `/partner/v1/organizations/${a.organizationId}/leads/count`,
  ];

  test("400: a date without a time zone, a date only, or an unparseable date, naming the parameter", async () => {
    for (const path of paths()) {
      for (const [param, value] of [
        ["startDate", "2024-03-10T10:30:00"],
        ["endDate", "2024-03-10"],
        ["startDate", "last tuesday"],
        ["endDate", "2024-13-01T00:00:00Z"],
      ]) {
        const res = await a.get(`${path}?${param}=${encodeURIComponent(value!)}`);
        expect(res.status).toBe(400);
        expect(res.body.status).toBe("error");
        expect(res.body.error).toStartWith(DATES_RULE);
        expect(res.body.error).toContain(param);
      }
    }
  });

  test("400: startDate after endDate", async () => {
    for (const path of paths()) {
      const res = await a.get(`${path}?startDate=${E}&endDate=${T}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toStartWith(DATES_RULE);
      expect(res.body.error).toContain("startDate");
      expect(res.body.error).toContain("after endDate");
    }
  });

  test("400: unknown query parameters", async () => {
    const res = await officeCount(a, a.officeId, { from: T });
    expect(res.status).toBe(400);
    expect(res.body.error).toStartWith("Invalid query parameters: unknown parameter 'from'");
  });

  test("400: an ID that is not a positive integer", async () => {
    for (const id of ["abc", "1.5", "-3", "0", "2147483648", "1e2"]) {
      expect((await officeCount(a, id)).body).toEqual({
        status: "error",
        error: "officeId must be a positive integer",
      });
      const org = await orgCount(a, id);
      expect([org.status, org.body.error]).toEqual([400, "organizationId must be a positive integer"]);
    }
  });

  test("401: a valid key without lead-tracking permission, even for its own office and organization", async () => {
    for (const res of [
      await officeCount(noPermission, noPermission.officeId),
      await orgCount(noPermission, noPermission.organizationId),
      await officeCount(noPermission, "abc", { startDate: "bad" }),
    ]) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    }
  });

  test("401: a missing, malformed or unknown key", async () => {
    for (const path of paths()) {
      const headers: Record<string, string>[] = [
        {},
        { authorization: `bearer ${a.apiKey}` },
        { authorization: "Bearer pss_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" },
      ];
      for (const h of headers) {
        const res = await call(api.baseUrl, "GET", path, { headers: h });
        expect(res.status).toBe(401);
        expect(res.body).toEqual(UNAUTHORIZED);
      }
    }
  });

  test("404: an office or organization that does not exist, or is another partner's, with the same answer", async () => {
    const missingOffice = await officeCount(a, 2_147_483_647);
    const othersOffice = await officeCount(a, b.officeId);
    expect(missingOffice.status).toBe(404);
    expect(missingOffice.body).toEqual({ status: "error", error: "Office not found" });
    expect([othersOffice.status, othersOffice.body]).toEqual([404, missingOffice.body]);
    const missingOrg = await orgCount(a, 2_147_483_647);
    const othersOrg = await orgCount(a, b.organizationId);
    expect(missingOrg.body).toEqual({ status: "error", error: "Organization not found" });
    expect([othersOrg.status, othersOrg.body]).toEqual([404, missingOrg.body]);
  });
});

test("each partner sees only its own offices and leads", async () => {
  const own = await officeCount(b, b.officeId);
  expect(own.body.totalLeads).toBe(2);
  const org = await orgCount(b, b.organizationId);
  expect(org.body.officeBreakdown).toEqual([{ officeId: b.officeId, officeName: expect.any(String), totalLeads: 2 }]);
  expect((await officeCount(b, a2)).status).toBe(404);
});

test("answers are cached for the configured seconds, then a new lead shows", async () => {
  const p = await api.createPartner({ leadTracking: true });
  const app = startLeadApp(api, { countCacheSeconds: 1 });
  try {
    const count = async () =>
      (await call(app.baseUrl, "GET", `/partner/v1/offices/${p.officeId}/leads/count`, { key: p.apiKey })).body
        .totalLeads;
    const orgTotal = async () =>
      (await call(app.baseUrl, "GET", `/partner/v1/organizations/${p.organizationId}/leads/count`, { key: p.apiKey }))
        .body.totalLeads;
    expect([await count(), await orgTotal()]).toEqual([0, 0]);
    await seed(p, p.officeId, [Date.now() - 1000]);
    expect([await count(), await orgTotal()]).toEqual([0, 0]);
    await Bun.sleep(1100);
    expect([await count(), await orgTotal()]).toEqual([1, 1]);
  } finally {
    await app.stop();
  }
});

test("the OpenAPI document describes the lead endpoints with their parameters and answers", async () => {
  const { body } = await call(api.baseUrl, "GET", "/partner/v1/openapi.json");
  for (const path of [
    "/partner/v1/offices/{officeId}/leads/count",
    "/partner/v1/organizations/{organizationId}/leads/count",
  ]) {
    const get = body.paths[path].get;
    expect(get.parameters.map((p: any) => p.name)).toEqual([
      path.includes("offices") ? "officeId" : "organizationId",
      "startDate",
      "endDate",
    ]);
    expect(Object.keys(get.responses)).toEqual(expect.arrayContaining(["200", "400", "401", "404"]));
  }
  const intake = body.paths["/v1/listings/{serviceListingId}/leads"].post;
  expect(intake.security).toEqual([]);
  expect(Object.keys(intake.requestBody.content["application/json"].schema.properties)).toEqual([
    "name",
    "email",
    "phone",
    "message",
    "website",
  ]);
  expect(Object.keys(intake.responses)).toEqual(expect.arrayContaining(["202", "400", "404", "429"]));
});
