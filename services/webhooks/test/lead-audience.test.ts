// Lead deliveries share nothing a key without lead tracking can observe (docs/leads.md "What a key without lead
// tracking can observe", docs/webhooks.md "Fair delivery"), on the real webhooks service, API, PostgreSQL and a
// receiver on loopback. Two keys of one partner: A with lead tracking, B without.
// - Capacity: B keeps slow attempts in flight and pings a fast endpoint; A's lead endpoint is a tarpit full of
//   attempts. With one partner-wide cap and one pool of worker slots, the lead attempts would take the slots B's
//   ping needs and B could time leads by its pings' delays; here B's ping goes out at once.
// - Becoming lead data: an endpoint B created, once A subscribes it to lead.received (naming the URL), is signed
//   with a new secret only; B's secret no longer verifies anything sent to it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { call, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import { uniqueName } from "../../../test/support/env.ts";
import { createPartnerAdmin } from "../../api/src/admin/partner-admin.ts";
import { startReceiver, verified, type Receiver } from "./support/receiver.ts";
import { startWebhooks, until, type WebhooksHarness } from "./support/webhooks-harness.ts";

/** Slower than any wait below, within the sender's timeout: an attempt to it holds its slot that long. */
const SLOW_MS = 7_000;
/** Per endpoint, per partner, and slots per instance: as small as makes the point. */
const CAP = 3;

let api: ApiHarness;
let receiver: Receiver;
let webhooks: WebhooksHarness;
const partners: Partner[] = [];

beforeAll(async () => {
  api = await startApi({ relay: false });
  receiver = startReceiver();
  webhooks = await startWebhooks({
    allowedHosts: [receiver.hostPort],
    publicBaseUrl: api.baseUrl,
    env: {
      WEBHOOK_CONCURRENCY: String(CAP),
      WEBHOOK_ENDPOINT_CONCURRENCY: String(CAP),
      WEBHOOK_PARTNER_CONCURRENCY: String(CAP),
      WEBHOOK_TIMEOUT_MS: String(SLOW_MS + 3_000),
    },
  });
});
afterAll(async () => {
  await webhooks?.stop();
  receiver?.stop();
  if (api) {
    await api.sql`DELETE FROM webhook_endpoints WHERE partner_id = ANY(${partners.map((p) => p.partnerId)}::uuid[])`;
    await api.stop();
  }
});

/** A partner with lead tracking (key A) and a second key without it (B), served by the webhooks instance. */
async function partnerWithTwoKeys(): Promise<{ keyA: string; keyB: string }> {
  const partner = await api.createPartner({ leadTracking: true });
  partners.push(partner);
  webhooks.partners.add(partner.partnerId);
  const keyB = (
    await createPartnerAdmin({ sql: api.sql, redis: api.redis }).createKey({
      partnerId: partner.partnerId,
      leadTracking: false,
    })
  ).apiKey;
  return { keyA: partner.apiKey, keyB };
}

async function endpoint(key: string, path: string, events: string[]) {
  const id = uniqueName("hook");
  const res = await call(api.baseUrl, "PUT", `/partner/v1/webhook-endpoints/${id}`, {
    key,
    body: { url: receiver.url(path), events },
  });
  expect(res.status).toBe(201);
  return { id, secret: res.body.secret as string };
}

const ping = async (key: string, endpointId: string) => {
  const res = await call(api.baseUrl, "POST", `/partner/v1/webhook-endpoints/${endpointId}/test`, { key });
  expect(res.status).toBe(202);
  return res.body.deliveryId as string;
};

const held = (path: string) => receiver.requests(path).filter((r) => r.answeredAt === undefined).length;

test("an endpoint B made and A subscribed to lead.received is signed with the new secret only", async () => {
  const { keyA, keyB } = await partnerWithTwoKeys();
  const path = `/b-made/${uniqueName("path")}`;
  const made = await endpoint(keyB, path, ["listing.published"]);
  const subscribed = await call(api.baseUrl, "PUT", `/partner/v1/webhook-endpoints/${made.id}`, {
    key: keyA,
    body: { url: receiver.url(path), events: ["listing.published", "lead.received"] },
  });
  expect(subscribed.status).toBe(200);
  const secret = subscribed.body.secret as string;
  expect(secret).toMatch(/^whsec_/);

  const deliveryId = await ping(keyA, made.id);
  const request = await until("the ping", () => receiver.requests(path)[0], 10_000);
  expect(request.headers["webhook-id"]).toBe(deliveryId);
  // One signature, with the new secret: B's old secret verifies nothing sent to a lead endpoint.
  expect(request.headers["webhook-signature"]!.split(" ")).toHaveLength(1);
  expect(verified(request, secret).type).toBe("ping");
  expect(() => verified(request, made.secret)).toThrow();
}, 30_000);

test("attempts to a lead endpoint take none of the capacity a key without lead tracking uses: its ping goes out at once while lead attempts fill the caps", async () => {
  const { keyA, keyB } = await partnerWithTwoKeys();
  const [bSlow, bFast, leadSlow] = ["/b-slow", "/b-fast", "/lead-slow"].map((p) => `${p}/${uniqueName("path")}`) as [
    string,
    string,
    string,
  ];
  for (const path of [bSlow, leadSlow]) receiver.script(path, () => ({ status: 204, delayMs: SLOW_MS }));
  const slow = await endpoint(keyB, bSlow, ["listing.published"]);
  const fast = await endpoint(keyB, bFast, ["listing.published"]);
  const lead = await endpoint(keyA, leadSlow, ["lead.received"]);

  // B holds one slow attempt; A's lead endpoint fills the partner's (and the instance's) other slots and more.
  await ping(keyB, slow.id);
  await until("B's slow attempt in flight", () => held(bSlow) === 1, 10_000);
  for (let i = 0; i < CAP; i++) await ping(keyA, lead.id);
  await until("the lead attempts in flight", () => held(leadSlow) >= CAP - 1, 10_000);

  const sentAt = Date.now();
  const deliveryId = await ping(keyB, fast.id);
  const arrived = await until("B's ping", () => receiver.requests(bFast)[0], SLOW_MS + 5_000);
  expect(arrived.headers["webhook-id"]).toBe(deliveryId);
  // The lead attempts were still on the wire: they did not delay it (one partner-wide cap made it wait for them).
  expect(held(leadSlow)).toBeGreaterThanOrEqual(CAP - 1);
  expect(arrived.receivedAt - sentAt).toBeLessThan(SLOW_MS / 2);
  // And the lead endpoint had its own full share meanwhile, beside B's attempts.
  await until("every lead attempt in flight", () => held(leadSlow) === CAP, 5_000);
}, 60_000);
