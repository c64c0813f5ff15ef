// The lead-data rule on every webhook route (services/api/src/webhooks/lead-data-rule.ts, docs/webhooks.md
// "Lead data"), with two keys of ONE partner: A has lead tracking, B has not. For B an endpoint carrying lead data
// (and its deliveries) does not exist: naming it by ID gets exactly the answer an unknown ID gets (same status, same
// body, and the status the unknown ID's answer must have) on every route, lists and the endpoint limit leave it
// out, nothing B sends changes it, and B's PUT of its ID creates an endpoint of B's own (IDs are per audience).
// Naming lead.received itself gets 401 {"status":"error","error":"Unauthorized"} (the lead-count routes' answer).
// A, and B on an endpoint without lead data, work as before; an endpoint B made becomes a lead endpoint only with a
// URL A gives, and a new secret.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { webhookBody } from "@pss/contracts";
import { uniqueName } from "../../../test/support/env.ts";
import { createPartnerAdmin } from "../src/admin/partner-admin.ts";
import { call, startApi, type ApiHarness, type Partner } from "./support/harness.ts";

const UNAUTHORIZED = { status: "error", error: "Unauthorized" };
const CRM_URL = "https://crm.example.com/hooks/pss";
const B_URL = "https://attacker.example.net/hook";

let api: ApiHarness;
let partner: Partner;
/** The partner's two keys: A with lead tracking, B without. */
let keyA: string;
let keyB: string;
/** A's endpoint subscribed to lead.received (and a listing event), with deliveries of both types and a ping. */
const leadEndpoint = uniqueName("lead-hook");
/** A's endpoint that was subscribed to lead.received and no longer is: its history is still lead data. */
const formerLeadEndpoint = uniqueName("former-lead-hook");
/** An endpoint without lead data, which B manages as before. */
const plainEndpoint = uniqueName("plain-hook");
/** A's lead endpoint whose ID B then creates an endpoint of its own with. */
const sharedId = uniqueName("shared-hook");
let leadDeliveryId: string;
let listingDeliveryOfLeadEndpoint: string;
let plainDeliveryId: string;

const req = (key: string, method: string, path: string, body?: unknown) =>
  call(api.baseUrl, method, `/partner/v1${path}`, { key, body });
const getEndpoint = (key: string, id: string) => req(key, "GET", `/webhook-endpoints/${id}`);

async function insertFailedDelivery(endpointId: string, type: "lead.received" | "listing.published"): Promise<string> {
  const id = crypto.randomUUID();
  const data =
    type === "lead.received"
      ? { externalListingId: "L-1", officeId: partner.officeId, officeLeadCount: 12, version: 12 }
      : { externalListingId: "L-1", status: "active", version: 1 };
  await api.sql`
    INSERT INTO webhook_deliveries (id, endpoint_id, partner_id, event_id, event_type, payload, status, attempt_count, last_error, created_at)
    SELECT ${id}::uuid, e.id, e.partner_id, ${crypto.randomUUID()}::uuid, ${type}, ${webhookBody(type, new Date().toISOString(), data)}, 'failed', 3, 'HTTP 500', now() - interval '1 minute'
    FROM webhook_endpoints e WHERE e.partner_id = ${partner.partnerId} AND e.mode = 'live' AND e.external_id = ${endpointId}`;
  return id;
}

const deliveryStatus = async (id: string) =>
  (await api.sql`SELECT status FROM webhook_deliveries WHERE id = ${id}::uuid`)[0]?.status;

beforeAll(async () => {
  api = await startApi({ relay: false });
  partner = await api.createPartner({ leadTracking: true });
  keyA = partner.apiKey;
  const admin = createPartnerAdmin({ sql: api.sql, redis: api.redis });
  keyB = (await admin.createKey({ partnerId: partner.partnerId, leadTracking: false })).apiKey;

  expect(
    (
      await req(keyA, "PUT", `/webhook-endpoints/${leadEndpoint}`, {
        url: CRM_URL,
        events: ["lead.received", "listing.published"],
      })
    ).status,
  ).toBe(201);
  expect(
    (await req(keyA, "PUT", `/webhook-endpoints/${formerLeadEndpoint}`, { url: CRM_URL, events: ["lead.received"] }))
      .status,
  ).toBe(201);
  expect(
    (await req(keyA, "PUT", `/webhook-endpoints/${formerLeadEndpoint}`, { events: ["listing.published"] })).status,
  ).toBe(200);
  expect(
    (await req(keyB, "PUT", `/webhook-endpoints/${plainEndpoint}`, { url: CRM_URL, events: ["listing.published"] }))
      .status,
  ).toBe(201);
  expect(
    (await req(keyA, "PUT", `/webhook-endpoints/${sharedId}`, { url: CRM_URL, events: ["lead.received"] })).status,
  ).toBe(201);
  leadDeliveryId = await insertFailedDelivery(leadEndpoint, "lead.received");
  listingDeliveryOfLeadEndpoint = await insertFailedDelivery(leadEndpoint, "listing.published");
  plainDeliveryId = await insertFailedDelivery(plainEndpoint, "listing.published");
});
afterAll(async () => {
  await api.sql`DELETE FROM webhook_endpoints WHERE partner_id = ${partner.partnerId}`;
  await api.stop();
});

/** B's answer for `path` with the lead endpoint's (or delivery's) ID in it, and for an ID that does not exist. */
async function asUnknown(method: string, path: (id: string) => string, id: string, unknown: string, body?: unknown) {
  const hidden = await req(keyB, method, path(id), body);
  const none = await req(keyB, method, path(unknown), body);
  return { hidden: { status: hidden.status, body: hidden.body }, unknown: { status: none.status, body: none.body } };
}

describe("for a key without lead tracking, lead endpoints and their deliveries answer as unknown IDs, and nothing changes", () => {
  const unknownEndpoint = () => uniqueName("no-such-hook");
  const endpointPath = (id: string) => `/webhook-endpoints/${id}`;

  test("PUT of an endpoint carrying lead data: every body answers as for a new ID, and the endpoint does not change", async () => {
    const before = (await getEndpoint(keyA, leadEndpoint)).body.endpoint;
    // Bodies a create refuses: the same 400 for the lead endpoint's ID as for an ID nobody has.
    for (const body of [{ url: B_URL }, { events: ["listing.published"] }, { enabled: false }, { url: 5 }, {}]) {
      for (const id of [leadEndpoint, formerLeadEndpoint]) {
        const { hidden, unknown } = await asUnknown("PUT", endpointPath, id, unknownEndpoint(), body);
        expect({ body, hidden }).toEqual({ body, hidden: unknown });
        expect(hidden.status).toBe(400);
      }
    }
    expect((await getEndpoint(keyA, leadEndpoint)).body.endpoint).toEqual(before);
    expect((await getEndpoint(keyA, formerLeadEndpoint)).body.endpoint.url).toBe(CRM_URL);
  });

  test("PUT that creates with an ID a lead endpoint holds: 201 and an endpoint of B's own, as for an ID nobody has; A's endpoint stays A's", async () => {
    const aBefore = (await getEndpoint(keyA, sharedId)).body.endpoint;
    const body = { url: B_URL, events: ["listing.published"] };
    const fresh = unknownEndpoint();
    const [created, createdFresh] = [
      await req(keyB, "PUT", endpointPath(sharedId), body),
      await req(keyB, "PUT", endpointPath(fresh), body),
    ];
    // The same answer as for a new ID, but for the ID and the secret.
    const shape = (r: { status: number; body: any }, id: string) => ({
      status: r.status,
      body: {
        ...r.body,
        secret: r.body.secret?.startsWith("whsec_"),
        endpoint: { ...r.body.endpoint, endpointId: r.body.endpoint.endpointId === id, createdAt: 0, updatedAt: 0 },
      },
    });
    expect(shape(created, sharedId)).toEqual(shape(createdFresh, fresh));
    expect(created.status).toBe(201);
    // B reads, lists and changes its own; A's lead endpoint is untouched and is what A names by that ID.
    expect((await getEndpoint(keyB, sharedId)).body.endpoint).toMatchObject({ endpointId: sharedId, url: B_URL });
    expect((await req(keyB, "PUT", endpointPath(sharedId), { description: "B's" })).status).toBe(200);
    const listedB = (await req(keyB, "GET", "/webhook-endpoints?limit=500")).body.results.filter(
      (e: any) => e.endpointId === sharedId,
    );
    expect(listedB.map((e: any) => e.url)).toEqual([B_URL]);
    expect((await getEndpoint(keyA, sharedId)).body.endpoint).toEqual(aBefore);
    expect((await req(keyB, "DELETE", endpointPath(sharedId))).status).toBe(200);
    expect((await getEndpoint(keyB, sharedId)).status).toBe(404);
    expect((await getEndpoint(keyA, sharedId)).body.endpoint).toEqual(aBefore);
  });

  test("PUT that subscribes to lead.received, new or existing endpoint: 401 before any other check", async () => {
    const fresh = uniqueName("b-lead");
    expect(
      await req(keyB, "PUT", `/webhook-endpoints/${fresh}`, { url: B_URL, events: ["lead.received"] }),
    ).toMatchObject({ status: 401, body: UNAUTHORIZED });
    expect(
      await req(keyB, "PUT", `/webhook-endpoints/${fresh}`, {
        url: "not a url",
        events: ["lead.received"],
        unknown: 1,
      }),
    ).toMatchObject({ status: 401, body: UNAUTHORIZED });
    expect(
      await req(keyB, "PUT", `/webhook-endpoints/${plainEndpoint}`, { events: ["listing.published", "lead.received"] }),
    ).toMatchObject({ status: 401, body: UNAUTHORIZED });
    expect((await getEndpoint(keyB, fresh)).status).toBe(404);
    expect((await getEndpoint(keyB, plainEndpoint)).body.endpoint.events).toEqual(["listing.published"]);
  });

  test("GET, DELETE, rotate-secret and test (ping) answer 404 as for an unknown ID, and change nothing", async () => {
    const pings = async () =>
      (
        await api.sql`SELECT count(*)::int AS n FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE e.partner_id = ${partner.partnerId} AND e.external_id = ${leadEndpoint} AND d.event_type = 'ping'`
      )[0]!.n;
    const pingsBefore = await pings();
    for (const [method, path] of [
      ["GET", endpointPath],
      ["DELETE", endpointPath],
      ["POST", (id: string) => `/webhook-endpoints/${id}/rotate-secret`],
      ["POST", (id: string) => `/webhook-endpoints/${id}/test`],
    ] as const) {
      for (const id of [leadEndpoint, formerLeadEndpoint]) {
        const { hidden, unknown } = await asUnknown(method, path, id, unknownEndpoint());
        expect({ method, path: path(id), hidden }).toEqual({ method, path: path(id), hidden: unknown });
        expect(hidden).toMatchObject({ status: 404, body: { status: "error", error: "Webhook endpoint not found" } });
      }
    }
    const after = (await getEndpoint(keyA, leadEndpoint)).body.endpoint;
    expect(after.previousSecretExpiresAt).toBeNull();
    expect(await pings()).toBe(pingsBefore);
    expect(await deliveryStatus(leadDeliveryId)).toBe("failed");
  });

  test("recover and replay answer as for an unknown ID, valid or not, and queue nothing", async () => {
    const deliveries = async () =>
      (
        await api.sql`SELECT count(*)::int AS n FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE e.partner_id = ${partner.partnerId} AND e.external_id = ANY(${[leadEndpoint, formerLeadEndpoint]}::text[]) AND d.status = 'pending'`
      )[0]!.n;
    const before = await deliveries();
    const since = encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString());
    for (const id of [leadEndpoint, formerLeadEndpoint]) {
      for (const q of [`since=${since}`, "since=yesterday"]) {
        const { hidden, unknown } = await asUnknown(
          "POST",
          (x) => `/webhook-endpoints/${x}/recover?${q}`,
          id,
          unknownEndpoint(),
        );
        expect({ q, hidden }).toEqual({ q, hidden: unknown });
        // The unknown ID's answer itself: 404 for a valid request, the 400 an invalid query gets first.
        expect({ q, status: hidden.status }).toEqual({ q, status: q === "since=yesterday" ? 400 : 404 });
      }
      for (const [body, status] of [
        [{ afterSequence: 0 }, 404],
        [{ since: new Date(Date.now() - 3_600_000).toISOString() }, 404],
        [{ afterSequence: -1, bogus: true }, 400],
        [{ afterSequence: 5, throughSequence: 5 }, 400],
      ] as const) {
        const { hidden, unknown } = await asUnknown(
          "POST",
          (x) => `/webhook-endpoints/${x}/replay`,
          id,
          unknownEndpoint(),
          body,
        );
        expect({ body, hidden }).toEqual({ body, hidden: unknown });
        expect({ body, status: hidden.status }).toEqual({ body, status });
      }
    }
    expect(await deliveries()).toBe(before);
    expect(await deliveryStatus(leadDeliveryId)).toBe("failed");
  });

  test("retry of a lead.received delivery, or of any delivery of an endpoint carrying lead data: 404 as for an unknown delivery", async () => {
    for (const id of [leadDeliveryId, listingDeliveryOfLeadEndpoint, leadDeliveryId.toUpperCase()]) {
      const { hidden, unknown } = await asUnknown(
        "POST",
        (x) => `/webhook-deliveries/${x}/retry`,
        id,
        crypto.randomUUID(),
      );
      expect({ id, hidden }).toEqual({ id, hidden: unknown });
      expect(hidden.status).toBe(404);
    }
    expect(await deliveryStatus(leadDeliveryId)).toBe("failed");
    expect(await deliveryStatus(listingDeliveryOfLeadEndpoint)).toBe("failed");
  });

  test("deliveries list filtered by an endpoint carrying lead data: the unknown endpoint's empty page; by eventType=lead.received: 401", async () => {
    for (const id of [leadEndpoint, formerLeadEndpoint]) {
      for (const extra of ["", "&status=failed&limit=1"]) {
        const { hidden, unknown } = await asUnknown(
          "GET",
          (x) => `/webhook-deliveries?endpointId=${x}${extra}`,
          id,
          unknownEndpoint(),
        );
        expect({ id, extra, hidden }).toEqual({ id, extra, hidden: unknown });
        expect(hidden).toEqual({ status: 200, body: { status: "success", results: [], nextCursor: null } });
      }
    }
    for (const q of ["eventType=lead.received", "eventType=lead.received&status=failed&limit=1"]) {
      const res = await req(keyB, "GET", `/webhook-deliveries?${q}`);
      expect({ q, status: res.status, body: res.body }).toEqual({ q, status: 401, body: UNAUTHORIZED });
    }
  });
});

describe("the endpoint limit counts what the key can see", () => {
  test("a key without lead tracking creates as many endpoints as if the lead endpoints did not exist; lead endpoints have a limit of their own", async () => {
    const p = await api.createPartner({ leadTracking: true });
    const admin = createPartnerAdmin({ sql: api.sql, redis: api.redis });
    const b = (await admin.createKey({ partnerId: p.partnerId, leadTracking: false })).apiKey;
    const put = (key: string, id: string, events: string[]) =>
      req(key, "PUT", `/webhook-endpoints/${id}`, { url: CRM_URL, events });
    try {
      // A fills the limit with lead endpoints.
      for (let i = 0; i < 20; i++) expect((await put(p.apiKey, `lead-${i}`, ["lead.received"])).status).toBe(201);
      expect(await put(p.apiKey, "lead-20", ["lead.received"])).toMatchObject({ status: 409 });
      // B sees none of them: it has its own 20 (a 409 at the first would have told it they exist).
      for (let i = 0; i < 20; i++) expect((await put(b, `plain-${i}`, ["listing.published"])).status).toBe(201);
      expect(await put(b, "plain-20", ["listing.published"])).toMatchObject({
        status: 409,
        body: { status: "error", error: "A partner may have at most 20 webhook endpoints; delete one first" },
      });
      // No 21st endpoint carrying lead data either, by subscribing one of B's.
      expect(await put(p.apiKey, "plain-0", ["listing.published", "lead.received"])).toMatchObject({ status: 409 });
      expect((await getEndpoint(b, "plain-0")).body.endpoint.events).toEqual(["listing.published"]);
      expect((await req(p.apiKey, "DELETE", "/webhook-endpoints/lead-0")).status).toBe(200);
      expect((await put(p.apiKey, "plain-0", ["listing.published", "lead.received"])).status).toBe(200);
      expect((await getEndpoint(b, "plain-0")).status).toBe(404);
    } finally {
      await api.sql`DELETE FROM webhook_endpoints WHERE partner_id = ${p.partnerId}`;
    }
  });
});

describe("an endpoint becomes a lead endpoint only at a URL a key with lead tracking gives, with a new secret", () => {
  test("A subscribing B's endpoint to lead.received: 400 without url; with it, 200 and a new secret that replaces B's at once", async () => {
    const id = uniqueName("b-made");
    const made = await req(keyB, "PUT", `/webhook-endpoints/${id}`, { url: B_URL, events: ["listing.published"] });
    expect(made.status).toBe(201);
    const events = ["listing.published", "lead.received"];
    // The URL B chose is not taken over silently.
    const noUrl = await req(keyA, "PUT", `/webhook-endpoints/${id}`, { events });
    expect(noUrl).toMatchObject({ status: 400, body: { status: "error", details: [{ path: "url" }] } });
    expect(noUrl.body.error).toStartWith("url: must be given when the endpoint is subscribed to lead.received");
    expect((await getEndpoint(keyB, id)).body.endpoint).toMatchObject({ url: B_URL, events: ["listing.published"] });

    const subscribed = await req(keyA, "PUT", `/webhook-endpoints/${id}`, { url: CRM_URL, events });
    expect(subscribed).toMatchObject({
      status: 200,
      body: { message: "Webhook endpoint updated", endpoint: { url: CRM_URL, events, previousSecretExpiresAt: null } },
    });
    expect(subscribed.body.secret).toMatch(/^whsec_/);
    expect(subscribed.body.secret).not.toBe(made.body.secret);
    // Now lead data: gone for B.
    expect((await getEndpoint(keyB, id)).status).toBe(404);
    // Later changes of a lead endpoint need neither (and issue no new secret).
    const later = await req(keyA, "PUT", `/webhook-endpoints/${id}`, { description: "CRM" });
    expect(later.status).toBe(200);
    expect(later.body.secret).toBeUndefined();
  });
});

describe("lists of a key without lead tracking leave lead data out", () => {
  test("endpoints: only those without lead data", async () => {
    const ids = (await req(keyB, "GET", "/webhook-endpoints?limit=500")).body.results.map((e: any) => e.endpointId);
    expect(ids).toContain(plainEndpoint);
    expect(ids).not.toContain(leadEndpoint);
    expect(ids).not.toContain(formerLeadEndpoint);
    const all = (await req(keyA, "GET", "/webhook-endpoints?limit=500")).body.results.map((e: any) => e.endpointId);
    expect(all).toEqual(expect.arrayContaining([plainEndpoint, leadEndpoint, formerLeadEndpoint]));
  });

  test("deliveries: none of an endpoint carrying lead data, whatever their type", async () => {
    const listB = await req(keyB, "GET", "/webhook-deliveries?limit=500");
    expect(listB.status).toBe(200);
    expect(listB.body.results.map((d: any) => d.deliveryId)).toEqual([plainDeliveryId]);
    expect(JSON.stringify(listB.body)).not.toContain("officeLeadCount");
    const listA = await req(keyA, "GET", "/webhook-deliveries?limit=500");
    expect(listA.body.results.map((d: any) => d.deliveryId)).toEqual(
      expect.arrayContaining([plainDeliveryId, leadDeliveryId, listingDeliveryOfLeadEndpoint]),
    );
  });
});

describe("what stays as it was", () => {
  test("B manages an endpoint without lead data: read, update, rotate, ping, recover, its deliveries, retry, replay, delete", async () => {
    const since = encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString());
    expect((await getEndpoint(keyB, plainEndpoint)).status).toBe(200);
    expect((await req(keyB, "PUT", `/webhook-endpoints/${plainEndpoint}`, { description: "B's" })).status).toBe(200);
    expect((await req(keyB, "POST", `/webhook-endpoints/${plainEndpoint}/rotate-secret`)).status).toBe(200);
    expect((await req(keyB, "POST", `/webhook-endpoints/${plainEndpoint}/test`)).status).toBe(202);
    expect(
      (
        await req(keyB, "GET", `/webhook-deliveries?endpointId=${plainEndpoint}&eventType=listing.published`)
      ).body.results.map((d: any) => d.deliveryId),
    ).toEqual([plainDeliveryId]);
    expect(await req(keyB, "POST", `/webhook-endpoints/${plainEndpoint}/recover?since=${since}`)).toMatchObject({
      status: 202,
      body: { requeued: 1 },
    });
    expect((await req(keyB, "POST", `/webhook-deliveries/${plainDeliveryId}/retry`)).status).toBe(202);
    expect(await req(keyB, "POST", `/webhook-endpoints/${plainEndpoint}/replay`, { afterSequence: 0 })).toMatchObject({
      status: 202,
      body: { status: "success" },
    });
    const scratch = uniqueName("b-scratch");
    expect(
      (await req(keyB, "PUT", `/webhook-endpoints/${scratch}`, { url: B_URL, events: ["listing.unpublished"] })).status,
    ).toBe(201);
    expect((await req(keyB, "DELETE", `/webhook-endpoints/${scratch}`)).status).toBe(200);
  });

  test("A (lead tracking) does everything on the lead endpoint", async () => {
    const since = encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString());
    expect((await req(keyA, "PUT", `/webhook-endpoints/${leadEndpoint}`, { description: "A's" })).status).toBe(200);
    expect(
      (
        await req(keyA, "GET", `/webhook-deliveries?eventType=lead.received&endpointId=${leadEndpoint}`)
      ).body.results.map((d: any) => d.deliveryId),
    ).toEqual([leadDeliveryId]);
    expect((await req(keyA, "POST", `/webhook-endpoints/${leadEndpoint}/rotate-secret`)).body.secret).toMatch(
      /^whsec_/,
    );
    expect((await req(keyA, "POST", `/webhook-endpoints/${leadEndpoint}/test`)).status).toBe(202);
    expect(await req(keyA, "POST", `/webhook-endpoints/${leadEndpoint}/recover?since=${since}`)).toMatchObject({
      status: 202,
      body: { requeued: 2 },
    });
    expect((await req(keyA, "POST", `/webhook-deliveries/${leadDeliveryId}/retry`)).status).toBe(202);
    expect(await req(keyA, "POST", `/webhook-endpoints/${leadEndpoint}/replay`, { afterSequence: 0 })).toMatchObject({
      status: 202,
      body: { status: "success" },
    });
    expect((await req(keyA, "DELETE", `/webhook-endpoints/${formerLeadEndpoint}`)).status).toBe(200);
  });

  test("a key of another partner still gets 404 for these IDs (the rule does not reveal another partner's endpoints)", async () => {
    const other = await api.createPartner();
    expect((await getEndpoint(other.apiKey, leadEndpoint)).status).toBe(404);
    expect((await req(other.apiKey, "POST", `/webhook-deliveries/${leadDeliveryId}/retry`)).status).toBe(404);
  });
});

test("every webhook route of the API is one this test exercises with both keys", () => {
  const exercised = [
    "PUT /partner/v1/webhook-endpoints/:endpointId",
    "GET /partner/v1/webhook-endpoints/:endpointId",
    "GET /partner/v1/webhook-endpoints",
    "DELETE /partner/v1/webhook-endpoints/:endpointId",
    "POST /partner/v1/webhook-endpoints/:endpointId/rotate-secret",
    "POST /partner/v1/webhook-endpoints/:endpointId/test",
    "POST /partner/v1/webhook-endpoints/:endpointId/recover",
    "POST /partner/v1/webhook-endpoints/:endpointId/replay",
    "GET /partner/v1/webhook-deliveries",
    "POST /partner/v1/webhook-deliveries/:deliveryId/retry",
  ];
  const routes = api.routes
    .filter((r) => r.path.startsWith("/partner/v1/webhook-") && r.method !== "HEAD")
    .map((r) => `${r.method} ${r.path}`);
  expect(routes.sort()).toEqual(exercised.sort());
});
