// What every partner request goes through, whatever the resource: authentication, request IDs, routing
// errors, body handling, rate limiting and the shape of unexpected failures.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type postgres from "postgres";
import type { Logger, LogFields } from "@pss/service-kit";
import { createApp } from "../src/app.ts";
import { createPartnerAdmin } from "../src/admin/partner-admin.ts";
import { authCacheKey, hashApiKey, LOCAL_TTL_MS, type Authenticator } from "@pss/http-kit";
import { call, sample, startApi, type ApiHarness, type Partner, type TestResponse } from "./support/harness.ts";
import { testWebhookSecrets, uniqueName, withinOneRateWindow } from "../../../test/support/env.ts";

const UNAUTHORIZED = { status: "error", error: "Unauthorized" };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

let api: ApiHarness;
let partner: Partner;

beforeAll(async () => {
  api = await startApi();
  partner = await api.createPartner();
});
afterAll(async () => {
  await api.stop();
});

/** A request with a raw Authorization header (or none), exactly as given. */
function withAuthorization(
  authorization: string | undefined,
  path = "/partner/v1/health",
  baseUrl = api.baseUrl,
): Promise<TestResponse> {
  return call(baseUrl, "GET", path, { headers: authorization === undefined ? {} : { authorization } });
}

/** Something shaped like a key we issue, but never issued. */
function unknownKey(): string {
  return "pss_live_" + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}

function expectErrorShape(res: TestResponse, status: number) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/json");
  expect(res.body.status).toBe("error");
  expect(typeof res.body.error).toBe("string");
  expect(res.body.error.length).toBeGreaterThan(0);
  expect(JSON.stringify(res.body)).not.toMatch(/\bat .*\.(ts|js):\d+|stack|Error:/);
}

async function partnerRowCounts(p: Partner) {
  const [row] = await api.sql<{ brokers: number; listings: number; outbox: number }[]>`
    SELECT (SELECT count(*)::int FROM brokers WHERE partner_id = ${p.partnerId}) AS brokers,
           (SELECT count(*)::int FROM listings WHERE partner_id = ${p.partnerId}) AS listings,
           (SELECT count(*)::int FROM outbox WHERE payload->>'partnerId' = ${p.partnerId}) AS outbox`;
  return row!;
}

/** Calls until the answer is 401 or the deadline passes; returns the last answer. */
async function refusedWithin(ms: number, request: () => Promise<{ status: number; body: unknown }>) {
  const deadline = Date.now() + ms;
  let res = await request();
  while (res.status !== 401 && Date.now() < deadline) {
    await Bun.sleep(50);
    res = await request();
  }
  return res;
}

describe("authentication", () => {
  const malformed: [string, () => string | undefined][] = [
    ["no Authorization header", () => undefined],
    ["'Bearer' with no key", () => "Bearer"],
    ["lowercase 'bearer'", () => `bearer ${partner.apiKey}`],
    ["two spaces after Bearer", () => `Bearer  ${partner.apiKey}`],
    ["the Basic scheme", () => `Basic ${partner.apiKey}`],
    ["the key without a scheme", () => partner.apiKey],
    ["a key with trailing characters", () => `Bearer ${partner.apiKey}x`],
    ["a well-formed key that was never issued", () => `Bearer ${unknownKey()}`],
    ["something that is not a key at all", () => "Bearer hunter2"],
  ];
  for (const [name, header] of malformed) {
    test(`${name} → 401 with exactly {"status":"error","error":"Unauthorized"}`, async () => {
      const res = await withAuthorization(header());
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });
  }

  test("an unknown key stays 401 when repeated (the negative cache answers the same)", async () => {
    const key = unknownKey();
    for (let i = 0; i < 3; i++) {
      const res = await withAuthorization(`Bearer ${key}`);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    }
  });

  test("the key in an ?access_token= query parameter instead of the header is 401", async () => {
    const res = await call(api.baseUrl, "GET", `/partner/v1/health?access_token=${partner.apiKey}`);
    expect(res.status).toBe(401);
    expect(res.body).toEqual(UNAUTHORIZED);
  });

  test("every partner endpoint requires the key, including writes, and nothing is written without it", async () => {
    const externalId = uniqueName("no-auth");
    const put = await call(api.baseUrl, "PUT", `/partner/v1/brokers/${externalId}`, { body: sample.broker() });
    expect(put.status).toBe(401);
    expect(put.body).toEqual(UNAUTHORIZED);
    const [row] = await api.sql`SELECT 1 FROM brokers WHERE external_id = ${externalId}`;
    expect(row).toBeUndefined();
    for (const path of [
      "/partner/v1/brokers",
      `/partner/v1/brokers/${externalId}`,
      "/partner/v1/listings",
      "/partner/v1/nope",
    ]) {
      const res = await call(api.baseUrl, "GET", path);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    }
  });

  test("a revoked key is refused within a second, even though it was cached a moment before", async () => {
    const p = await api.createPartner();
    expect((await p.get("/partner/v1/health")).status).toBe(200);
    const cacheKey = authCacheKey(hashApiKey(p.apiKey));
    expect(await api.redis.get(cacheKey)).not.toBeNull();

    const admin = createPartnerAdmin({ sql: api.sql, redis: api.redis });
    expect(await admin.revokeKey({ partnerId: p.partnerId, apiKey: p.apiKey })).toEqual({ revoked: true });
    expect(await api.redis.get(cacheKey)).toBeNull();

    const res = await refusedWithin(LOCAL_TTL_MS + 500, () => p.get("/partner/v1/health"));
    expect(res.status).toBe(401);
    expect(res.body).toEqual(UNAUTHORIZED);
    const write = await p.put(`/partner/v1/brokers/${uniqueName("revoked")}`, sample.broker());
    expect(write.status).toBe(401);
    expect(await partnerRowCounts(p)).toEqual({ brokers: 0, listings: 0, outbox: 0 });
  });

  test("a second key of the same partner keeps working after the first is revoked, and sees the same records", async () => {
    const p = await api.createPartner();
    const externalId = uniqueName("shared");
    expect((await p.put(`/partner/v1/brokers/${externalId}`, sample.broker())).status).toBe(201);
    const admin = createPartnerAdmin({ sql: api.sql, redis: api.redis });
    const { apiKey: second } = await admin.createKey({ partnerId: p.partnerId });
    await admin.revokeKey({ partnerId: p.partnerId, apiKey: p.apiKey });
    expect((await refusedWithin(LOCAL_TTL_MS + 500, () => p.get("/partner/v1/health"))).status).toBe(401);
    const res = await call(api.baseUrl, "GET", `/partner/v1/brokers/${externalId}`, { key: second });
    expect(res.status).toBe(200);
    expect(res.body.broker.externalBrokerId).toBe(externalId);
  });
});

describe("GET /partner/v1/health", () => {
  test("with a valid key answers 200 with status success and the current time in ISO 8601", async () => {
    const res = await partner.get("/partner/v1/health");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.body).toEqual({
      status: "success",
      timestamp: expect.any(String),
      partnerId: partner.partnerId,
      mode: "live",
      leadTracking: false,
    });
    expect(res.body.timestamp).toMatch(ISO_DATE_TIME);
    expect(Math.abs(Date.parse(res.body.timestamp) - Date.now())).toBeLessThan(5_000);
  });

  test("a key with lead tracking learns its organization and office IDs, which the lead-count routes then accept", async () => {
    const p = await api.createPartner({ leadTracking: true });
    const admin = createPartnerAdmin({ sql: api.sql, redis: api.redis });
    const { officeId: branch } = await admin.createOffice({
      organizationId: p.organizationId,
      name: "Round Rock branch",
    });
    const res = await p.get("/partner/v1/health");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ partnerId: p.partnerId, mode: "live", leadTracking: true });
    // Only this partner's organization (other partners' are in the same database), both offices, oldest first.
    expect(res.body.organizations).toEqual([
      {
        organizationId: p.organizationId,
        organizationName: expect.any(String),
        offices: [
          { officeId: p.officeId, officeName: expect.stringContaining("main office"), isDefault: true },
          { officeId: branch, officeName: "Round Rock branch", isDefault: false },
        ],
      },
    ]);
    const [organization] = res.body.organizations;
    const counted = await p.get(`/partner/v1/organizations/${organization.organizationId}/leads/count`);
    expect(counted.status).toBe(200);
    expect(counted.body.officeBreakdown.map((o: { officeId: number }) => o.officeId)).toEqual(
      organization.offices.map((o: { officeId: number }) => o.officeId),
    );
    for (const office of organization.offices) {
      expect((await p.get(`/partner/v1/offices/${office.officeId}/leads/count`)).status).toBe(200);
    }
  });

  test("a test key says it is in test mode; a key without lead tracking gets no organization or office IDs", async () => {
    const p = await api.createPartner({ test: true });
    const live = await p.get("/partner/v1/health");
    expect(live.body).toMatchObject({ partnerId: p.partnerId, mode: "live", leadTracking: false });
    expect(live.body).not.toHaveProperty("organizations");
    const testKey = await p.test!.get("/partner/v1/health");
    expect(testKey.status).toBe(200);
    expect(testKey.body).toMatchObject({ partnerId: p.partnerId, mode: "test", leadTracking: false });
    expect(testKey.body).not.toHaveProperty("organizations");
  });

  test("changes no data", async () => {
    const p = await api.createPartner();
    expect((await p.put(`/partner/v1/brokers/${uniqueName("h")}`, sample.broker())).status).toBe(201);
    const before = await partnerRowCounts(p);
    expect(before.brokers).toBe(1);
    for (let i = 0; i < 3; i++) expect((await p.get("/partner/v1/health")).status).toBe(200);
    expect(await partnerRowCounts(p)).toEqual(before);
  });

  test("POST instead of GET is 405 with Allow: GET", async () => {
    const res = await call(api.baseUrl, "POST", "/partner/v1/health", { key: partner.apiKey, body: {} });
    expectErrorShape(res, 405);
    expect(res.headers.get("allow")).toBe("GET");
  });
});

describe("when Redis is down", () => {
  let down: ApiHarness;
  beforeAll(async () => {
    down = await startApi({ redisUrl: "redis://127.0.0.1:1", relay: false });
  });
  afterAll(async () => {
    await down.stop();
  });

  test("a valid key still authenticates (PostgreSQL answers) and an invalid one is still 401", async () => {
    expect(down.redis.status).not.toBe("ready");
    const p = await down.createPartner();
    for (let i = 0; i < 2; i++) {
      const ok = await p.get("/partner/v1/health");
      expect(ok.status).toBe(200);
      expect(ok.body.status).toBe("success");
    }
    const bad = await withAuthorization(`Bearer ${unknownKey()}`, "/partner/v1/health", down.baseUrl);
    expect(bad.status).toBe(401);
    expect(bad.body).toEqual(UNAUTHORIZED);
  });

  test("a revoked key is refused within a second (nothing stale survives the local cache)", async () => {
    const p = await down.createPartner();
    expect((await p.get("/partner/v1/health")).status).toBe(200);
    const result = await createPartnerAdmin({ sql: down.sql, redis: down.redis }).revokeKey({
      partnerId: p.partnerId,
      apiKey: p.apiKey,
    });
    expect(result.revoked).toBe(true);
    expect((await refusedWithin(LOCAL_TTL_MS + 500, () => p.get("/partner/v1/health"))).status).toBe(401);
  });

  test("partners can still write and read brokers", async () => {
    const p = await down.createPartner();
    const externalId = uniqueName("redis-down");
    const put = await p.put(`/partner/v1/brokers/${externalId}`, sample.broker());
    expect(put.status).toBe(201);
    const get = await p.get(`/partner/v1/brokers/${externalId}`);
    expect(get.status).toBe(200);
    expect(get.body.broker.serviceBrokerId).toBe(put.body.serviceBrokerId);
  });
});

describe("request IDs", () => {
  test("every response carries x-request-id: success, 401, 404, 405, 400 and 415", async () => {
    const responses = await Promise.all([
      partner.get("/partner/v1/health"),
      withAuthorization(undefined),
      partner.get("/partner/v1/nope"),
      call(api.baseUrl, "GET", "/nope"),
      call(api.baseUrl, "DELETE", "/partner/v1/listings/x", { key: partner.apiKey }),
      call(api.baseUrl, "PUT", "/partner/v1/brokers/x", {
        key: partner.apiKey,
        body: "{",
        headers: { "content-type": "application/json" },
      }),
      call(api.baseUrl, "PUT", "/partner/v1/brokers/x", {
        key: partner.apiKey,
        body: "{}",
        headers: { "content-type": "text/plain" },
      }),
    ]);
    expect(responses.map((r) => r.status)).toEqual([200, 401, 404, 404, 405, 400, 415]);
    const ids = responses.map((r) => r.headers.get("x-request-id"));
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test("a sane incoming X-Request-Id is echoed back, on success and on error", async () => {
    const ok = await call(api.baseUrl, "GET", "/partner/v1/health", {
      key: partner.apiKey,
      headers: { "x-request-id": "abc-123" },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-request-id")).toBe("abc-123");
    const denied = await call(api.baseUrl, "GET", "/partner/v1/health", {
      headers: { "x-request-id": "trace.42:retry_1" },
    });
    expect(denied.status).toBe(401);
    expect(denied.headers.get("x-request-id")).toBe("trace.42:retry_1");
  });

  for (const [name, incoming] of [
    ["200 characters long", "a".repeat(200)],
    ["containing spaces", "abc 123"],
    ["containing a quote and angle brackets", `"><script>`],
  ] as const) {
    test(`an incoming X-Request-Id ${name} is replaced by a generated one`, async () => {
      const res = await call(api.baseUrl, "GET", "/partner/v1/health", {
        key: partner.apiKey,
        headers: { "x-request-id": incoming },
      });
      expect(res.status).toBe(200);
      const id = res.headers.get("x-request-id");
      expect(id).not.toBe(incoming);
      expect(id).toMatch(UUID);
    });
  }
});

describe("routing and body errors", () => {
  test("an unknown path under /partner/v1/ with a valid key is 404 'Not found'", async () => {
    const res = await partner.get("/partner/v1/nope");
    expectErrorShape(res, 404);
    expect(res.body).toEqual({ status: "error", error: "Not found" });
  });

  test("an unknown path outside /partner/v1/ is 404 'Not found'", async () => {
    for (const opts of [{ key: partner.apiKey }, {}]) {
      const res = await call(api.baseUrl, "GET", "/nope", opts);
      expectErrorShape(res, 404);
      expect(res.body).toEqual({ status: "error", error: "Not found" });
    }
  });

  test("a method the path does not support is 405 with an Allow header listing GET and PUT", async () => {
    for (const path of ["/partner/v1/listings/x", "/partner/v1/brokers/x"]) {
      const res = await call(api.baseUrl, "DELETE", path, { key: partner.apiKey });
      expectErrorShape(res, 405);
      expect(res.body).toEqual({ status: "error", error: "Method not allowed" });
      const allow = (res.headers.get("allow") ?? "").split(",").map((m) => m.trim());
      expect(allow).toContain("GET");
      expect(allow).toContain("PUT");
      expect(allow).not.toContain("DELETE");
    }
  });

  test("a PUT with Content-Type text/plain is 415 and writes nothing", async () => {
    const externalId = uniqueName("text");
    const res = await call(api.baseUrl, "PUT", `/partner/v1/brokers/${externalId}`, {
      key: partner.apiKey,
      body: JSON.stringify(sample.broker()),
      headers: { "content-type": "text/plain" },
    });
    expectErrorShape(res, 415);
    expect(res.body).toEqual({ status: "error", error: "Content-Type must be application/json" });
    expect((await partner.get(`/partner/v1/brokers/${externalId}`)).status).toBe(404);
  });

  test("application/json with a charset parameter is accepted", async () => {
    const res = await call(api.baseUrl, "PUT", `/partner/v1/brokers/${uniqueName("charset")}`, {
      key: partner.apiKey,
      body: sample.broker(),
      headers: { "content-type": "application/json; charset=utf-8" },
    });
    expect(res.status).toBe(201);
  });

  test("malformed JSON is 400 'Request body is not valid JSON' and writes nothing", async () => {
    const externalId = uniqueName("bad-json");
    const res = await call(api.baseUrl, "PUT", `/partner/v1/brokers/${externalId}`, {
      key: partner.apiKey,
      body: '{"name": "Jane", ',
    });
    expectErrorShape(res, 400);
    expect(res.body).toEqual({ status: "error", error: "Request body is not valid JSON" });
    expect((await partner.get(`/partner/v1/brokers/${externalId}`)).status).toBe(404);
  });

  test("a PUT with no body at all is a 400 in the error shape", async () => {
    const res = await call(api.baseUrl, "PUT", `/partner/v1/brokers/${uniqueName("empty")}`, {
      key: partner.apiKey,
      headers: { "content-type": "application/json" },
    });
    expectErrorShape(res, 400);
    expect(res.body).toEqual({ status: "error", error: "Request body is not valid JSON" });
  });

  describe("with a 2 KB body limit", () => {
    let small: ApiHarness;
    let p: Partner;
    beforeAll(async () => {
      small = await startApi({ maxBodyBytes: 2048, relay: false });
      p = await small.createPartner();
    });
    afterAll(async () => {
      await small.stop();
    });

    const bigBroker = () => sample.broker({ profile: { bio: "x".repeat(4000) } });

    test("a 4 KB body is refused with 413 naming the limit, and nothing is written", async () => {
      const externalId = uniqueName("big");
      const body = JSON.stringify(bigBroker());
      expect(body.length).toBeGreaterThan(4000);
      const res = await p.put(`/partner/v1/brokers/${externalId}`, bigBroker());
      expectErrorShape(res, 413);
      expect(res.body).toEqual({ status: "error", error: "Request body is too large: the limit is 2048 bytes" });
      expect(res.headers.get("x-request-id")).toMatch(UUID);
      expect((await p.get(`/partner/v1/brokers/${externalId}`)).status).toBe(404);
    });

    test("a 4 KB body sent without Content-Length (chunked) is refused with 413 too", async () => {
      const externalId = uniqueName("chunked");
      const bytes = new TextEncoder().encode(JSON.stringify(bigBroker()));
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < bytes.length; i += 1024) controller.enqueue(bytes.slice(i, i + 1024));
          controller.close();
        },
      });
      const res = await fetch(`${small.baseUrl}/partner/v1/brokers/${externalId}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${p.apiKey}`, "content-type": "application/json" },
        body: stream,
      });
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual({
        status: "error",
        error: "Request body is too large: the limit is 2048 bytes",
      });
      expect((await p.get(`/partner/v1/brokers/${externalId}`)).status).toBe(404);
    });

    test("the limit counts bytes, not characters: 1,500 two-byte characters sent chunked are refused with 413", async () => {
      const externalId = uniqueName("utf8");
      const text = JSON.stringify(sample.broker({ profile: { bio: "é".repeat(1500) } }));
      const bytes = new TextEncoder().encode(text);
      expect(text.length).toBeLessThan(2048);
      expect(bytes.length).toBeGreaterThan(2048);
      const res = await fetch(`${small.baseUrl}/partner/v1/brokers/${externalId}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${p.apiKey}`, "content-type": "application/json" },
        body: new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(bytes);
            controller.close();
          },
        }),
      });
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual({
        status: "error",
        error: "Request body is too large: the limit is 2048 bytes",
      });
      expect((await p.get(`/partner/v1/brokers/${externalId}`)).status).toBe(404);
    });

    test("a body under the limit is accepted", async () => {
      const res = await p.put(`/partner/v1/brokers/${uniqueName("fits")}`, sample.broker());
      expect(JSON.stringify(sample.broker()).length).toBeLessThan(2048);
      expect(res.status).toBe(201);
    });
  });
});

describe("rate limiting", () => {
  let limited: ApiHarness;
  beforeAll(async () => {
    limited = await startApi({ rateLimitPerMinute: 3, relay: false });
  });
  afterAll(async () => {
    await limited.stop();
  });

  /** The limiter counts per fixed minute; start a sequence well inside one so it cannot straddle two. */
  const awaitRoomInWindow = () => withinOneRateWindow(60, 10);

  test("the 4th request within a minute is 429 with Retry-After, and another partner's key is not affected", async () => {
    const first = await limited.createPartner();
    const second = await limited.createPartner();
    await awaitRoomInWindow();
    for (let i = 0; i < 3; i++) expect((await first.get("/partner/v1/health")).status).toBe(200);

    const res = await first.get("/partner/v1/health");
    expectErrorShape(res, 429);
    expect(res.body).toEqual({ status: "error", error: "Too many requests" });
    const retryAfter = res.headers.get("retry-after");
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter)).toBeLessThanOrEqual(60);
    expect(res.headers.get("x-request-id")).toMatch(UUID);

    // Writes are limited too, and a limited write changes nothing.
    const externalId = uniqueName("limited");
    expect((await first.put(`/partner/v1/brokers/${externalId}`, sample.broker())).status).toBe(429);
    const [row] =
      await limited.sql`SELECT 1 FROM brokers WHERE partner_id = ${first.partnerId} AND external_id = ${externalId}`;
    expect(row).toBeUndefined();

    const other = await second.get("/partner/v1/health");
    expect(other.status).toBe(200);
    expect(other.body.status).toBe("success");
  });

  test("requests without a valid key are answered 401, not counted against anyone", async () => {
    const p = await limited.createPartner();
    await awaitRoomInWindow();
    for (let i = 0; i < 5; i++)
      expect((await withAuthorization(`Bearer ${unknownKey()}`, "/partner/v1/health", limited.baseUrl)).status).toBe(
        401,
      );
    for (let i = 0; i < 3; i++) expect((await p.get("/partner/v1/health")).status).toBe(200);
  });

  test("with no limit configured (the default) many requests in a burst are never 429", async () => {
    const statuses = await Promise.all(
      Array.from({ length: 60 }, () => partner.get("/partner/v1/health").then((r) => r.status)),
    );
    expect(statuses.every((s) => s === 200)).toBe(true);
  });
});

describe("unexpected failures", () => {
  const SECRET = "secret internal detail";
  const KEY = "pss_live_" + "A".repeat(43);

  function appWithBrokenDatabase() {
    const logged: { msg: string; fields?: LogFields }[] = [];
    const logger: Logger = {
      enabled: () => true,
      debug: () => {},
      info: () => {},
      warn: () => {},
      error: (msg, fields) => logged.push({ msg, fields }),
      child: () => logger,
    };
    const fail = () => {
      throw new Error(SECRET);
    };
    const sql = Object.assign(fail, { begin: async () => fail(), unsafe: fail }) as unknown as postgres.Sql;
    const authenticator: Authenticator = {
      authenticate: async (key) =>
        key === KEY ? { partnerId: crypto.randomUUID(), keyId: "1", leadTracking: false, mode: "live" as const } : null,
    };
    const app = createApp({
      sql,
      logger,
      authenticator,
      partnerRateLimiter: { check: async () => null },
      publicBaseUrl: "https://market.example.test",
      maxBodyBytes: 1_048_576,
      webhookSecrets: testWebhookSecrets(),
    });
    return { app, logged };
  }

  const request = (method: string, path: string, body?: unknown) =>
    new Request(`http://localhost${path}`, {
      method,
      headers: { authorization: `Bearer ${KEY}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });

  for (const [method, path, body] of [
    ["PUT", "/partner/v1/brokers/x", sample.broker()],
    ["GET", "/partner/v1/brokers/x", undefined],
    ["GET", "/partner/v1/brokers", undefined],
  ] as const) {
    test(`a failing database on ${method} ${path} answers 500 'Internal server error' with the request ID and no internals`, async () => {
      const { app, logged } = appWithBrokenDatabase();
      const res = await app.handle(request(method, path, body));
      expect(res.status).toBe(500);
      expect(res.headers.get("content-type")).toContain("application/json");
      const text = await res.text();
      expect(text).not.toContain(SECRET);
      expect(text).not.toMatch(/\.ts:\d+|\bat \w|stack/);
      const parsed = JSON.parse(text);
      const requestId = res.headers.get("x-request-id");
      expect(requestId).toMatch(UUID);
      expect(parsed).toEqual({ status: "error", error: "Internal server error", requestId });
      // Operators can still find out what happened, by the same request ID.
      const entry = logged.find((l) => l.fields?.requestId === requestId);
      expect(entry).toBeDefined();
      expect(String((entry!.fields!.err as Error)?.message ?? entry!.fields!.err)).toContain(SECRET);
    });
  }

  test("the 500 echoes a sane incoming request ID so the partner can quote it", async () => {
    const { app } = appWithBrokenDatabase();
    const req = request("PUT", "/partner/v1/brokers/x", sample.broker());
    req.headers.set("x-request-id", "partner-trace-7");
    const res = await app.handle(req);
    expect(res.status).toBe(500);
    expect(res.headers.get("x-request-id")).toBe("partner-trace-7");
    expect(await res.json()).toEqual({ status: "error", error: "Internal server error", requestId: "partner-trace-7" });
  });

  test("a failing authenticator answers 500, not 401, without internals", async () => {
    const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent, enabled: () => false };
    const app = createApp({
      sql: {} as postgres.Sql,
      logger: silent,
      authenticator: {
        authenticate: async () => {
          throw new Error(SECRET);
        },
      },
      partnerRateLimiter: { check: async () => null },
      publicBaseUrl: "https://market.example.test",
      maxBodyBytes: 1024,
      webhookSecrets: testWebhookSecrets(),
    });
    const res = await app.handle(request("GET", "/partner/v1/health"));
    expect(res.status).toBe(500);
    const body = await res.json();
    expect(body).toEqual({
      status: "error",
      error: "Internal server error",
      requestId: res.headers.get("x-request-id"),
    });
    expect(JSON.stringify(body)).not.toContain(SECRET);
  });
});
