// Issue 37, item 4: Idempotency-Key on the buyer and partner POSTs, through the real API and PostgreSQL. A request
// sent again with the same key (by a client that saw no answer, or by a balancer) has no second effect and gets the
// first answer again; the same key with another request is refused (422); an error keeps nothing; keys are per API
// key (partners) and per client address (buyers); the inquiry form carries a key of its own.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import Redis from "ioredis";
import { testUrls, uniqueName } from "../../../test/support/env.ts";
import { createPartnerAdmin } from "../src/admin/partner-admin.ts";
import { purgeIdempotencyKeys } from "../src/http/idempotency.ts";
import { call, sample, startApi, type ApiHarness, type Partner } from "./support/harness.ts";

let api: ApiHarness;
let partner: Partner;
let brokerId: string;
let listingId: number;

beforeAll(async () => {
  // Requests come from loopback as from our own proxy: each test buyer can have an address of its own.
  api = await startApi({ relay: false, trustProxy: true });
  partner = await api.createPartner({ leadTracking: true, test: true });
  brokerId = uniqueName("broker");
  expect((await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
  listingId = await newListing();
}, 60_000);
afterAll(async () => {
  await api.sql`DELETE FROM webhook_endpoints WHERE partner_id = ${partner.partnerId}::uuid`;
  await api?.stop();
});

async function newListing(): Promise<number> {
  const res = await partner.put(`/partner/v1/listings/${uniqueName("listing")}`, sample.listing(brokerId));
  expect(res.status).toBe(201);
  return res.body.serviceListingId as number;
}

const inquiry = (message = "Is the lease renewable?") => ({ name: "Ann Buyer", email: "ann@example.com", message });
const lead = (body: unknown, headers: Record<string, string>, id = listingId) =>
  call(api.baseUrl, "POST", `/v1/listings/${id}/leads`, { body, headers });
const leadsOf = async (id: number) =>
  (await api.sql`SELECT id::text FROM leads WHERE listing_id = ${id} ORDER BY created_at`).map((r) => r.id as string);
const keyed = (key: string, from = "198.51.100.90") => ({ "idempotency-key": key, "x-forwarded-for": from });
const partnerPost = (key: string, path: string, headers: Record<string, string>, body?: unknown) =>
  call(api.baseUrl, "POST", `/partner/v1${path}`, { key, headers, body });

describe("the buyer's inquiry (POST /v1/listings/{id}/leads)", () => {
  test("sent twice with one key: one lead, one event, the same answer twice (the second marked as replayed)", async () => {
    const id = await newListing();
    const key = crypto.randomUUID();
    const first = await lead(inquiry(), keyed(key), id);
    const again = await lead(inquiry(), keyed(key), id);
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await leadsOf(id)).toEqual([first.body.leadId]);
    const n = (
      await api.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM outbox WHERE message_key = ${first.body.leadId}`
    )[0]!.n;
    expect(n).toBe(1);
    // Without a key, the same body is another inquiry.
    expect((await lead(inquiry(), { "x-forwarded-for": "198.51.100.90" }, id)).status).toBe(202);
    expect((await leadsOf(id)).length).toBe(2);
  });

  test("ten at once with one key: one lead, and all ten get its ID", async () => {
    const id = await newListing();
    const key = crypto.randomUUID();
    const answers = await Promise.all(Array.from({ length: 10 }, () => lead(inquiry(), keyed(key), id)));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 202));
    const stored = await leadsOf(id);
    expect(stored).toHaveLength(1);
    expect(new Set(answers.map((a) => a.body.leadId))).toEqual(new Set(stored));
  });

  test("a client that gave up waiting and sends again gets the lead the first attempt stored, not a second one", async () => {
    const id = await newListing();
    const key = crypto.randomUUID();
    // The first attempt's answer never reaches the client: it writes the request and hangs up at once.
    const body = JSON.stringify(inquiry());
    const socket = connect({ host: "127.0.0.1", port: Number(new URL(api.baseUrl).port) });
    await new Promise<void>((resolve) =>
      socket.write(
        [
          `POST /v1/listings/${id}/leads HTTP/1.1`,
          "Host: 127.0.0.1",
          "Content-Type: application/json",
          `Content-Length: ${Buffer.byteLength(body)}`,
          `Idempotency-Key: ${key}`,
          "X-Forwarded-For: 198.51.100.90",
          "",
          body,
        ].join("\r\n"),
        () => resolve(),
      ),
    );
    socket.destroy();
    // The API finishes it all the same: the lead is stored.
    const deadline = Date.now() + 10_000;
    while ((await leadsOf(id)).length === 0 && Date.now() < deadline) await Bun.sleep(20);
    const [stored] = await leadsOf(id);
    expect(stored).toBeDefined();
    const retry = await lead(inquiry(), keyed(key), id);
    expect(retry.status).toBe(202);
    expect(retry.body.leadId).toBe(stored!);
    expect(await leadsOf(id)).toEqual([stored!]);
  });

  test("the same key with another body is refused with 422 in the error shape; nothing more is stored", async () => {
    const id = await newListing();
    const key = crypto.randomUUID();
    expect((await lead(inquiry(), keyed(key), id)).status).toBe(202);
    const other = await lead(inquiry("Another question"), keyed(key), id);
    expect(other.status).toBe(422);
    expect(other.body).toEqual({
      status: "error",
      error:
        "This Idempotency-Key was already used with a different request (method, path, query or body); use a new key for a new request",
    });
    // Another listing is another path: the same key refused too.
    expect((await lead(inquiry(), keyed(key), listingId)).status).toBe(422);
    expect((await leadsOf(id)).length).toBe(1);
  });

  test("keys are per client address: another buyer's identical key and body is its own inquiry", async () => {
    const id = await newListing();
    const key = uniqueName("order");
    const a = await lead(inquiry(), keyed(key, "198.51.100.91"), id);
    const b = await lead(inquiry(), keyed(key, "198.51.100.92"), id);
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(b.body.leadId).not.toBe(a.body.leadId);
    expect((await leadsOf(id)).length).toBe(2);
  });

  test("an error keeps nothing: the same key may be sent again and then takes effect", async () => {
    const key = crypto.randomUUID();
    const blank = await lead({ ...inquiry(), message: "   " }, keyed(key));
    expect(blank.status).toBe(400);
    const hidden = await lead(inquiry(), keyed(key), 999_999_999_999);
    expect(hidden.status).toBe(404);
    const id = await newListing();
    const ok = await lead(inquiry(), keyed(key), id);
    expect(ok.status).toBe(202);
    expect(await leadsOf(id)).toEqual([ok.body.leadId]);
  });

  test("a key that is not 1-255 visible ASCII characters is refused with 400, before anything is stored", async () => {
    const id = await newListing();
    for (const bad of ["", "has space", "x".repeat(256), "tab\there"]) {
      const res = await call(api.baseUrl, "POST", `/v1/listings/${id}/leads`, {
        body: inquiry(),
        headers: { "idempotency-key": bad, "x-forwarded-for": "198.51.100.93" },
      });
      expect([bad, res.status, res.body.error]).toEqual([bad, 400, expect.stringContaining("Idempotency-Key")]);
    }
    expect(await leadsOf(id)).toEqual([]);
    // The structured-field form ("…") is the same key as the bare one.
    const bare = uniqueName("k");
    const quoted = await lead(inquiry(), { ...keyed(bare), "idempotency-key": `"${bare}"` }, id);
    expect(quoted.status).toBe(202);
    expect((await lead(inquiry(), keyed(bare), id)).body).toEqual(quoted.body);
    expect((await leadsOf(id)).length).toBe(1);
  });

  test("an answer is kept for the retention period only: then the key is free again (and the row deleted)", async () => {
    const id = await newListing();
    const key = crypto.randomUUID();
    const first = await lead(inquiry(), keyed(key), id);
    await api.sql`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE idempotency_key = ${key}`;
    const later = await lead(inquiry(), keyed(key), id);
    expect(later.status).toBe(202);
    expect(later.body.leadId).not.toBe(first.body.leadId);
    await api.sql`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE idempotency_key = ${key}`;
    expect(await purgeIdempotencyKeys(api.sql, 24)).toBeGreaterThanOrEqual(1);
    expect(await api.sql`SELECT 1 FROM idempotency_keys WHERE idempotency_key = ${key}`).toHaveLength(0);
  });
});

describe("the listing page's inquiry form", () => {
  const formKeyOf = (page: string) => /name="idempotencyKey" value="([^"]+)"/.exec(page)?.[1];
  const postForm = (id: number, fields: Record<string, string>) =>
    fetch(`${api.baseUrl}/listings/${id}/inquiry`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": "198.51.100.94" },
      body: new URLSearchParams(fields).toString(),
    });

  test("carries a key made for each rendering; the same form posted twice is one inquiry, with other text a second", async () => {
    const id = await newListing();
    const page = await (await fetch(`${api.baseUrl}/listings/${id}`)).text();
    const key = formKeyOf(page);
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    expect(formKeyOf(await (await fetch(`${api.baseUrl}/listings/${id}`)).text())).not.toBe(key);
    const fields = { ...inquiry(), idempotencyKey: key! };
    for (let i = 0; i < 2; i++) {
      const res = await postForm(id, fields);
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe(`/listings/${id}/inquiry/sent#content`);
    }
    expect((await leadsOf(id)).length).toBe(1);
    // Back, edited, sent again from the same page: a new inquiry.
    expect((await postForm(id, { ...fields, message: "And the staff?" })).status).toBe(303);
    expect((await leadsOf(id)).length).toBe(2);
  });
});

describe("partner POSTs (per API key)", () => {
  const endpoint = async () => {
    const id = uniqueName("crm");
    const res = await call(api.baseUrl, "PUT", `/partner/v1/webhook-endpoints/${id}`, {
      key: partner.apiKey,
      body: { url: "https://crm.example.com/hooks/pss", events: ["listing.published"] },
    });
    expect(res.status).toBe(201);
    return id;
  };
  const deliveries = async (endpointId: string) =>
    (
      await api.sql`SELECT d.id::text FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE e.partner_id = ${partner.partnerId}::uuid AND e.external_id = ${endpointId}`
    ).length;

  test("webhook test: one ping for one key, the same deliveryId twice", async () => {
    const id = await endpoint();
    const key = crypto.randomUUID();
    const a = await partnerPost(partner.apiKey, `/webhook-endpoints/${id}/test`, { "idempotency-key": key });
    const b = await partnerPost(partner.apiKey, `/webhook-endpoints/${id}/test`, { "idempotency-key": key });
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(b.body).toEqual(a.body);
    expect(await deliveries(id)).toBe(1);
    expect((await partnerPost(partner.apiKey, `/webhook-endpoints/${id}/test`, {})).status).toBe(202);
    expect(await deliveries(id)).toBe(2);
  });

  test("retry and recover: a repeat with the key re-queues nothing more and answers as the first time", async () => {
    const id = await endpoint();
    const ping = await partnerPost(partner.apiKey, `/webhook-endpoints/${id}/test`, {});
    const deliveryId = ping.body.deliveryId as string;
    await api.sql`UPDATE webhook_deliveries SET status = 'failed', attempt_count = 10, next_attempt_at = NULL WHERE id = ${deliveryId}::uuid`;
    const recoverKey = crypto.randomUUID();
    const path = `/webhook-endpoints/${id}/recover?since=2020-01-01T00:00:00Z`;
    const first = await partnerPost(partner.apiKey, path, { "idempotency-key": recoverKey });
    expect(first).toMatchObject({ status: 202, body: { requeued: 1 } });
    await api.sql`UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL WHERE id = ${deliveryId}::uuid`;
    const again = await partnerPost(partner.apiKey, path, { "idempotency-key": recoverKey });
    expect(again).toMatchObject({ status: 202, body: { requeued: 1 } });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    // The replayed answer changed nothing: the delivery stays as it was left.
    const [row] = await api.sql`SELECT status FROM webhook_deliveries WHERE id = ${deliveryId}::uuid`;
    expect(row!.status).toBe("failed");
    // The same key on another query (another range) is another request: 422.
    expect(
      (
        await partnerPost(partner.apiKey, `/webhook-endpoints/${id}/recover?since=2021-01-01T00:00:00Z`, {
          "idempotency-key": recoverKey,
        })
      ).status,
    ).toBe(422);
    const retryKey = crypto.randomUUID();
    const retried = await partnerPost(partner.apiKey, `/webhook-deliveries/${deliveryId}/retry`, {
      "idempotency-key": retryKey,
    });
    expect(retried.status).toBe(202);
    await api.sql`UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL WHERE id = ${deliveryId}::uuid`;
    const retriedAgain = await partnerPost(partner.apiKey, `/webhook-deliveries/${deliveryId}/retry`, {
      "idempotency-key": retryKey,
    });
    expect(retriedAgain.body).toEqual(retried.body);
    expect((await api.sql`SELECT status FROM webhook_deliveries WHERE id = ${deliveryId}::uuid`)[0]!.status).toBe(
      "failed",
    );
  });

  test("rotate-secret: a repeat returns the secret in force (kept encrypted), and rotates nothing more", async () => {
    const id = await endpoint();
    const key = crypto.randomUUID();
    const first = await partnerPost(partner.apiKey, `/webhook-endpoints/${id}/rotate-secret`, {
      "idempotency-key": key,
    });
    expect(first.status).toBe(200);
    const version = (
      await api.sql<{ version: number }[]>`SELECT version FROM webhook_endpoints WHERE external_id = ${id}`
    )[0]!.version;
    const again = await partnerPost(partner.apiKey, `/webhook-endpoints/${id}/rotate-secret`, {
      "idempotency-key": key,
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect((await api.sql`SELECT version FROM webhook_endpoints WHERE external_id = ${id}`)[0]!.version).toBe(version);
    const [stored] = await api.sql`SELECT body, sealed FROM idempotency_keys WHERE idempotency_key = ${key}`;
    expect(stored!.sealed).toBe(true);
    expect(stored!.body).not.toContain(first.body.secret);
  });

  test("replay and a simulated lead: a repeat queues and stores nothing more; the batch upsert answers the same", async () => {
    const id = await endpoint();
    const replayKey = crypto.randomUUID();
    const range = { since: "2020-01-01T00:00:00Z" };
    const a = await partnerPost(
      partner.apiKey,
      `/webhook-endpoints/${id}/replay`,
      { "idempotency-key": replayKey },
      range,
    );
    const b = await partnerPost(
      partner.apiKey,
      `/webhook-endpoints/${id}/replay`,
      { "idempotency-key": replayKey },
      range,
    );
    expect(a.status).toBe(202);
    expect(b.body).toEqual(a.body);
    const n = (
      await api.sql<
        { n: number }[]
      >`SELECT count(*)::int AS n FROM webhook_replays WHERE partner_id = ${partner.partnerId}::uuid AND endpoint_id = (SELECT id FROM webhook_endpoints WHERE external_id = ${id})`
    )[0]!.n;
    expect(n).toBeLessThanOrEqual(1);

    const test = partner.test!;
    const testListing = uniqueName("test-listing");
    expect((await test.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBeLessThan(300);
    expect((await test.put(`/partner/v1/listings/${testListing}`, sample.listing(brokerId))).status).toBe(201);
    const leadKey = crypto.randomUUID();
    const simulate = () =>
      partnerPost(test.apiKey, `/test/listings/${testListing}/leads`, { "idempotency-key": leadKey }, {});
    const s1 = await simulate();
    const s2 = await simulate();
    expect([s1.status, s2.status]).toEqual([202, 202]);
    expect(s2.body.leadId).toBe(s1.body.leadId);
    expect(
      await api.sql`SELECT 1 FROM leads WHERE partner_id = ${partner.partnerId}::uuid AND mode = 'test'`,
    ).toHaveLength(1);

    const batchKey = crypto.randomUUID();
    const items = [{ externalListingId: uniqueName("batch"), listing: sample.listing(brokerId) }];
    const batch1 = await partnerPost(partner.apiKey, "/listings/batch", { "idempotency-key": batchKey }, { items });
    const batch2 = await partnerPost(partner.apiKey, "/listings/batch", { "idempotency-key": batchKey }, { items });
    expect(batch1.status).toBe(200);
    expect(batch1.body.results[0].httpStatus).toBe(201);
    expect(batch2.body).toEqual(batch1.body);
  });

  test("keys are per API key: the same key from another key of the partner is that key's own request", async () => {
    const redis = new Redis(testUrls().REDIS_URL, { lazyConnect: true });
    const other = await createPartnerAdmin({ sql: api.sql, redis }).createKey({
      partnerId: partner.partnerId,
      leadTracking: true,
    });
    redis.disconnect();
    const id = await endpoint();
    const key = crypto.randomUUID();
    const a = await partnerPost(partner.apiKey, `/webhook-endpoints/${id}/test`, { "idempotency-key": key });
    const b = await partnerPost(other.apiKey, `/webhook-endpoints/${id}/test`, { "idempotency-key": key });
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(b.body.deliveryId).not.toBe(a.body.deliveryId);
    expect(await deliveries(id)).toBe(2);
  });
});
