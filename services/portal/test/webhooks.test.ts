// The portal's webhooks page and its actions against the real API, webhooks service and a receiver on loopback
// (issue 42): a test event, a resend, a replay and a secret rotation from the portal run through the partner API's
// own functions: the same lead-data scope and the same re-send budget per partner and audience as a key's requests;
// each attempt's answer shows with its first bytes; every action needs the form's CSRF token.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { call, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import { startReceiver, verified, type Receiver } from "../../webhooks/test/support/receiver.ts";
import { startWebhooks, until, type WebhooksHarness } from "../../webhooks/test/support/webhooks-harness.ts";
import { uniqueName } from "../../../test/support/env.ts";
import { csrfIn, startPortal, twoSignedIn, type PortalClient, type PortalHarness } from "./support/portal-harness.ts";

const BUDGET = 6;
let api: ApiHarness;
let portal: PortalHarness;
let receiver: Receiver;
let webhooks: WebhooksHarness;
let partner: Partner;
let withLeads: PortalClient;
let withoutLeads: PortalClient;
const endpointId = uniqueName("hooks");
const leadEndpointId = uniqueName("lead-hooks");
const path = `/hooks/${endpointId}`;
let secret = "";

const deliveriesTo = (p: string) => receiver.requests(p);

beforeAll(async () => {
  receiver = startReceiver();
  api = await startApi({ webhookResendDailyBudget: BUDGET });
  partner = await api.createPartner({ leadTracking: true });
  [portal, webhooks] = await Promise.all([
    startPortal({ publicBaseUrl: api.baseUrl, invitations: false, resendDailyBudget: BUDGET }),
    startWebhooks({ allowedHosts: [receiver.hostPort], publicBaseUrl: api.baseUrl, partners: [partner.partnerId] }),
  ]);
  const created = await partner.put(`/partner/v1/webhook-endpoints/${endpointId}`, {
    url: receiver.url(path),
    events: ["listing.report.changed"],
  });
  expect(created.status).toBe(201);
  secret = created.body.secret;
  // An endpoint carrying lead data: only people with lead access see it.
  expect(
    (
      await partner.put(`/partner/v1/webhook-endpoints/${leadEndpointId}`, {
        url: receiver.url(`/hooks/${leadEndpointId}`),
        events: ["lead.received"],
      })
    ).status,
  ).toBe(201);
  ({ withLeads, withoutLeads } = await twoSignedIn(portal, api.baseUrl, partner.apiKey, "hooks"));
}, 120_000);
afterAll(async () => {
  await Promise.allSettled([webhooks?.stop(), portal?.stop()]);
  receiver?.stop();
  if (api) {
    await api.sql`DELETE FROM webhook_endpoints WHERE partner_id = ${partner.partnerId}::uuid`;
    await api.stop();
  }
}, 60_000);

/** Posts the action form of the webhooks page whose action ends with `suffix`. */
async function postAction(client: PortalClient, page: string, suffix: string, fields: Record<string, string> = {}) {
  const html = (await client.get(page)).text;
  const action = [...html.matchAll(/<form method="post" action="([^"]+)"/g)]
    .map((m) => m[1]!)
    .find((a) => a.endsWith(suffix));
  if (!action) throw new Error(`no form ending with ${suffix} on ${page}`);
  return client.post(action.replace(/&amp;/g, "&"), { csrf: csrfIn(html)!, ...fields });
}

describe("the webhooks page", () => {
  test("shows the endpoints in the person's scope: a lead-data endpoint only with lead access", async () => {
    const lead = await withLeads.get("/portal/live/webhooks");
    expect(lead.text).toContain(endpointId);
    expect(lead.text).toContain(leadEndpointId);
    const noLead = await withoutLeads.get("/portal/live/webhooks");
    expect(noLead.text).toContain(endpointId);
    expect(noLead.text).not.toContain(leadEndpointId);
    expect(noLead.text).not.toContain("lead.received");
  });

  test("a test event from the portal is signed and delivered; its attempt shows the answer's first bytes", async () => {
    // An answer longer than what is kept: its first 512 bytes show.
    const answer = `accepted by receiver-7; ${"x".repeat(600)}`;
    receiver.script(path, () => ({ status: 200, body: answer }));
    const before = deliveriesTo(path).length;
    const res = await postAction(withLeads, "/portal/live/webhooks", `/endpoints/${endpointId}/test`);
    expect(res.status).toBe(303);
    const ping = await until("the ping delivered", () =>
      deliveriesTo(path)
        .slice(before)
        .find((r) => verified(r, secret).type === "ping"),
    );
    expect(verified(ping, secret).data.endpointId).toBe(endpointId);
    const page = await withLeads.get(res.location!);
    expect(page.text).toContain("A test event (ping) is queued");
    const [row] =
      await api.sql`SELECT id::text AS id FROM webhook_deliveries WHERE partner_id = ${partner.partnerId}::uuid AND event_type = 'ping' ORDER BY created_at DESC LIMIT 1`;
    await until(
      "the attempt recorded",
      async () => (await api.sql`SELECT 1 FROM webhook_attempts WHERE delivery_id = ${row!.id}::uuid`).length > 0,
    );
    const detail = await withLeads.get(`/portal/live/webhooks/deliveries/${row!.id}`);
    expect(detail.text).toContain("HTTP 200");
    const excerpt = /<pre>(accepted by receiver-7;[^<]*)<\/pre>/.exec(detail.text)?.[1];
    expect(excerpt).toBe(answer.slice(0, 512));
  });

  test("a failed delivery is resent from the portal after the receiver recovers, and delivered", async () => {
    receiver.script(path, () => ({ status: 500 }));
    const queued = await call(api.baseUrl, "POST", `/partner/v1/webhook-endpoints/${endpointId}/test`, {
      key: partner.apiKey,
    });
    expect(queued.status).toBe(202);
    const deliveryId = queued.body.deliveryId as string;
    await until(
      "the delivery failed",
      async () =>
        (await api.sql`SELECT status FROM webhook_deliveries WHERE id = ${deliveryId}::uuid`)[0]?.status === "failed",
    );
    const failed = await withLeads.get(`/portal/live/webhooks/deliveries/${deliveryId}`);
    expect(failed.text).toContain("HTTP 500");
    receiver.script(path, () => ({ status: 204 }));
    const resent = await postAction(withLeads, `/portal/live/webhooks/deliveries/${deliveryId}`, "/resend");
    expect(resent.status).toBe(303);
    await until(
      "delivered after the resend",
      async () =>
        (await api.sql`SELECT status FROM webhook_deliveries WHERE id = ${deliveryId}::uuid`)[0]?.status ===
        "delivered",
    );
    const page = await withLeads.get(`/portal/live/webhooks/deliveries/${deliveryId}`);
    expect(page.text).toContain("HTTP 204");
  });

  test("a person without lead access cannot act on a lead-data endpoint (it answers as unknown)", async () => {
    const page = await withoutLeads.get("/portal/live/webhooks");
    const res = await withoutLeads.post(`/portal/live/webhooks/endpoints/${leadEndpointId}/test`, {
      csrf: csrfIn(page.text)!,
    });
    expect(res.status).toBe(404);
  });

  test("rotating the secret shows the new one once; deliveries are then signed with it", async () => {
    const res = await postAction(withLeads, "/portal/live/webhooks", `/endpoints/${endpointId}/rotate-secret`);
    expect(res.status).toBe(200);
    const fresh = /data-secret="new">(whsec_[A-Za-z0-9+/=]+)</.exec(res.text)?.[1];
    expect(fresh).toBeString();
    expect(fresh).not.toBe(secret);
    expect(res.headers.get("cache-control")).toBe("no-store");
    // Not on the webhooks page, nor anywhere else afterwards.
    expect((await withLeads.get("/portal/live/webhooks")).text).not.toContain(fresh!);
    receiver.script(path, () => ({ status: 204 }));
    const brokerId = uniqueName("broker");
    await partner.put(`/partner/v1/brokers/${brokerId}`, { name: "B", email: "b@example.com" });
    await partner.put(`/partner/v1/listings/${uniqueName("listing")}`, {
      brokerExternalId: brokerId,
      status: "FOR_SALE",
      businessType: "Bakery",
      location: { city: "Austin", state: "TX", country: "US", visibility: "SHOW_CITY_STATE" },
    });
    const signed = await until("a report change delivered", () =>
      deliveriesTo(path).find((r) => {
        try {
          return verified(r, fresh!).type === "listing.report.changed";
        } catch {
          return false;
        }
      }),
    );
    expect(signed).toBeDefined();
  }, 60_000);

  test("a replay from the portal sends the range's events again, as the API's replay does; no range is refused", async () => {
    const before = deliveriesTo(path).length;
    const since = new Date(Date.now() - 3_600_000).toISOString().slice(0, 16);
    const res = await postAction(withLeads, "/portal/live/webhooks", `/endpoints/${endpointId}/replay`, { since });
    expect(res.status).toBe(303);
    const page = await withLeads.get(res.location!);
    expect(page.text).toMatch(/\d+ deliver(y is|ies are) queued for the endpoint/);
    await until("a replayed report change delivered", () =>
      deliveriesTo(path)
        .slice(before)
        .find((r) => r.headers["webhook-id"] !== undefined),
    );
    const empty = await postAction(withLeads, "/portal/live/webhooks", `/endpoints/${endpointId}/replay`);
    expect(empty.status).toBe(400);
    expect(empty.text).toContain("Give the range to replay");
  }, 60_000);

  test("resends, tests and replays share the API's daily budget per partner and audience: the portal's 429 says so", async () => {
    const [{ used }] = (await api.sql`
      SELECT COALESCE(sum(queued), 0)::int AS used FROM webhook_replays WHERE partner_id = ${partner.partnerId}::uuid AND lead_data = false AND created_at > now() - interval '1 day'`) as unknown as [
      { used: number },
    ];
    // Spend what is left through the API; the portal's next test event is over the budget.
    for (let i = used; i < BUDGET; i++)
      expect(
        (await call(api.baseUrl, "POST", `/partner/v1/webhook-endpoints/${endpointId}/test`, { key: partner.apiKey }))
          .status,
      ).toBe(202);
    const refused = await postAction(withLeads, "/portal/live/webhooks", `/endpoints/${endpointId}/test`);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.text).toContain("Not done");
    // The lead audience's budget is another: the lead endpoint still takes a test event, from a person with lead access.
    expect((await postAction(withLeads, "/portal/live/webhooks", `/endpoints/${leadEndpointId}/test`)).status).toBe(
      303,
    );
  });

  test("every action form needs this session's CSRF token", async () => {
    for (const action of [
      `/portal/live/webhooks/endpoints/${endpointId}/test`,
      `/portal/live/webhooks/endpoints/${endpointId}/rotate-secret`,
      `/portal/live/webhooks/endpoints/${endpointId}/replay`,
      `/portal/live/webhooks/deliveries/${crypto.randomUUID()}/resend`,
    ]) {
      const res = await withLeads.post(action, { since: "2020-01-01T00:00" });
      expect([action, res.status]).toEqual([action, 403]);
    }
  });
});
