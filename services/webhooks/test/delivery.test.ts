// Delivery as a partner's receiver sees it, on real PostgreSQL and a real HTTP receiver on loopback (allowed by the
// test-only WEBHOOK_ALLOWED_HOSTS): the API queues pings (POST …/test) and the webhooks service sends them. Every
// request is verified with the standardwebhooks package. The retry schedule is 0, 300 ms, 600 ms and the timeout
// 2 s here, so retries, timeouts and the end of a schedule take seconds.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { call, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import { uniqueName } from "../../../test/support/env.ts";
import { startReceiver, verified, type Receiver } from "./support/receiver.ts";
import { startWebhooks, until, type WebhooksHarness } from "./support/webhooks-harness.ts";

let api: ApiHarness;
let receiver: Receiver;
let webhooks: WebhooksHarness;
let partner: Partner;

beforeAll(async () => {
  api = await startApi({ relay: false });
  receiver = startReceiver();
  webhooks = await startWebhooks({ allowedHosts: [receiver.hostPort], publicBaseUrl: api.baseUrl });
  partner = await api.createPartner();
  webhooks.partners.add(partner.partnerId);
});
afterAll(async () => {
  await webhooks?.stop();
  receiver?.stop();
  if (api) {
    await api.sql`DELETE FROM webhook_endpoints WHERE partner_id = ${partner.partnerId}::uuid`;
    await api.stop();
  }
});

const request = (method: string, path: string, body?: unknown) =>
  call(api.baseUrl, method, `/partner/v1${path}`, { key: partner.apiKey, body });

/** A new endpoint whose receiver path is its ID; returns its ID, path and signing secret. */
async function newEndpoint(): Promise<{ id: string; path: string; secret: string }> {
  const id = uniqueName("crm");
  const path = `/hooks/${id}`;
  const res = await request("PUT", `/webhook-endpoints/${id}`, {
    url: receiver.url(path),
    events: ["listing.published"],
  });
  expect(res.status).toBe(201);
  return { id, path, secret: res.body.secret };
}

async function ping(endpointId: string): Promise<string> {
  const res = await request("POST", `/webhook-endpoints/${endpointId}/test`);
  expect(res.status).toBe(202);
  return res.body.deliveryId;
}

async function delivery(endpointId: string, deliveryId: string) {
  const res = await request("GET", `/webhook-deliveries?endpointId=${endpointId}`);
  expect(res.status).toBe(200);
  return res.body.results.find((d: { deliveryId: string }) => d.deliveryId === deliveryId);
}

const settled = (endpointId: string, deliveryId: string, status: "delivered" | "failed") =>
  until(`delivery ${deliveryId} ${status}`, async () => {
    const d = await delivery(endpointId, deliveryId);
    return d?.status === status ? d : null;
  });

describe("delivery", () => {
  test("a ping arrives once, signed as Standard Webhooks says, and the deliveries list shows the attempt", async () => {
    const ep = await newEndpoint();
    const deliveryId = await ping(ep.id);
    const d = await settled(ep.id, deliveryId, "delivered");
    const [req] = receiver.requests(ep.path);
    expect(receiver.requests(ep.path)).toHaveLength(1);
    expect(req!.headers["webhook-id"]).toBe(deliveryId);
    expect(req!.headers["content-type"]).toBe("application/json");
    expect(Math.abs(Number(req!.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(300);
    const body = verified(req!, ep.secret);
    expect(body).toEqual({ type: "ping", timestamp: body.timestamp, data: { endpointId: ep.id, version: 1 } });
    expect(d).toMatchObject({
      status: "delivered",
      attemptCount: 1,
      lastStatusCode: 204,
      lastError: null,
      nextAttemptAt: null,
      payload: body,
    });
    expect(d.attempts).toEqual([
      { attempt: 1, at: expect.any(String), statusCode: 204, latencyMs: expect.any(Number), error: null },
    ]);
    // Another partner's secret does not verify it.
    expect(() => verified(req!, `whsec_${randomBytes(32).toString("base64")}`)).toThrow();
  });

  test("after 500s the same delivery comes again on the schedule, same webhook-id and body, until a 2xx", async () => {
    const ep = await newEndpoint();
    receiver.script(ep.path, (nth) => ({ status: nth <= 2 ? 500 : 200 }));
    const deliveryId = await ping(ep.id);
    const d = await settled(ep.id, deliveryId, "delivered");
    const requests = receiver.requests(ep.path);
    expect(requests.map((r) => r.status)).toEqual([500, 500, 200]);
    expect(new Set(requests.map((r) => r.headers["webhook-id"]))).toEqual(new Set([deliveryId]));
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
    for (const r of requests) expect(verified(r, ep.secret).type).toBe("ping");
    expect(d.attempts.map((a: { statusCode: number; error: string | null }) => [a.statusCode, a.error])).toEqual([
      [500, "HTTP 500"],
      [500, "HTTP 500"],
      [200, null],
    ]);
    // Delivered again: the endpoint is not failing any more.
    expect((await request("GET", `/webhook-endpoints/${ep.id}`)).body.endpoint.failingSince).toBeNull();
  });

  test("a receiver slower than the timeout is tried again; the attempt says it timed out", async () => {
    const ep = await newEndpoint();
    receiver.script(ep.path, (nth) => (nth === 1 ? { status: 204, delayMs: 5000 } : { status: 204 }));
    const deliveryId = await ping(ep.id);
    const d = await settled(ep.id, deliveryId, "delivered");
    expect(d.attempts.map((a: { statusCode: number | null; error: string | null }) => [a.statusCode, a.error])).toEqual(
      [
        [null, "timed out after 2000 ms"],
        [204, null],
      ],
    );
    const requests = receiver.requests(ep.path);
    expect(requests.map((r) => r.headers["webhook-id"])).toEqual([deliveryId, deliveryId]);
    for (const r of requests) verified(r, ep.secret);
  });

  test("Retry-After is honoured: the next attempt comes no earlier than the receiver asked", async () => {
    const ep = await newEndpoint();
    receiver.script(ep.path, (nth) => (nth === 1 ? { status: 503, headers: { "retry-after": "2" } } : { status: 204 }));
    const deliveryId = await ping(ep.id);
    await settled(ep.id, deliveryId, "delivered");
    const [first, second] = receiver.requests(ep.path);
    // The schedule alone would have tried again after ~300 ms.
    expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(2000);
    verified(second!, ep.secret);
  });

  test("when the schedule is used up the delivery fails; recover?since= sends it again with its webhook-id", async () => {
    const ep = await newEndpoint();
    receiver.script(ep.path, () => ({ status: 500 }));
    const since = new Date(Date.now() - 1000).toISOString();
    const deliveryId = await ping(ep.id);
    const failed = await settled(ep.id, deliveryId, "failed");
    expect(failed).toMatchObject({ attemptCount: 3, lastStatusCode: 500, nextAttemptAt: null });
    expect((await request("GET", `/webhook-endpoints/${ep.id}`)).body.endpoint.failingSince).not.toBeNull();
    expect(
      (await request("GET", `/webhook-deliveries?endpointId=${ep.id}&status=failed`)).body.results.map(
        (d: { deliveryId: string }) => d.deliveryId,
      ),
    ).toEqual([deliveryId]);

    receiver.script(ep.path, () => ({ status: 204 }));
    // Nothing failed after `now`: nothing to recover.
    expect(
      (
        await request(
          "POST",
          `/webhook-endpoints/${ep.id}/recover?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
        )
      ).body.requeued,
    ).toBe(0);
    const recovered = await request("POST", `/webhook-endpoints/${ep.id}/recover?since=${encodeURIComponent(since)}`);
    expect(recovered.status).toBe(202);
    expect(recovered.body.requeued).toBe(1);
    const d = await settled(ep.id, deliveryId, "delivered");
    expect(d.attemptCount).toBe(4);
    const requests = receiver.requests(ep.path);
    expect(requests.map((r) => r.status)).toEqual([500, 500, 500, 204]);
    expect(new Set(requests.map((r) => r.headers["webhook-id"]))).toEqual(new Set([deliveryId]));
    expect(verified(requests[3]!, ep.secret).data.endpointId).toBe(ep.id);
  });

  test("retry sends one delivery again by hand", async () => {
    const ep = await newEndpoint();
    receiver.script(ep.path, (nth) => ({ status: nth <= 3 ? 500 : 204 }));
    const deliveryId = await ping(ep.id);
    await settled(ep.id, deliveryId, "failed");
    const retried = await request("POST", `/webhook-deliveries/${deliveryId}/retry`);
    expect(retried.status).toBe(202);
    await settled(ep.id, deliveryId, "delivered");
    expect(receiver.requests(ep.path).map((r) => r.headers["webhook-id"])).toEqual([
      deliveryId,
      deliveryId,
      deliveryId,
      deliveryId,
    ]);
  });
});

describe("disabling", () => {
  test("a 410 disables the endpoint at once: no retry, the partner sees why, pings are refused until it is re-enabled", async () => {
    const ep = await newEndpoint();
    const goneBefore = await webhooks.metric("webhook_delivery_attempts_total", { outcome: "endpoint_gone" });
    receiver.script(ep.path, () => ({ status: 410 }));
    const deliveryId = await ping(ep.id);
    const d = await settled(ep.id, deliveryId, "failed");
    expect(d.attemptCount).toBe(1);
    expect(receiver.requests(ep.path)).toHaveLength(1);
    const endpoint = (await request("GET", `/webhook-endpoints/${ep.id}`)).body.endpoint;
    expect(endpoint).toMatchObject({ enabled: false, disabledAt: expect.any(String) });
    expect(endpoint.disabledReason).toContain("410");
    expect(await webhooks.metric("webhook_delivery_attempts_total", { outcome: "endpoint_gone" })).toBe(goneBefore + 1);
    expect((await webhooks.service.endpointStates()).disabled_gone).toBeGreaterThanOrEqual(1);
    expect(await webhooks.metric("webhook_endpoints", { state: "disabled_gone" })).toBeGreaterThanOrEqual(1);

    expect((await request("POST", `/webhook-endpoints/${ep.id}/test`)).status).toBe(409);
    receiver.script(ep.path, () => ({ status: 204 }));
    expect((await request("PUT", `/webhook-endpoints/${ep.id}`, { enabled: true })).body.endpoint).toMatchObject({
      enabled: true,
      disabledReason: null,
    });
    await settled(ep.id, await ping(ep.id), "delivered");
  });

  test("an endpoint that has failed every attempt for 5 days is disabled, and says so", async () => {
    const ep = await newEndpoint();
    receiver.script(ep.path, () => ({ status: 500 }));
    await settled(ep.id, await ping(ep.id), "failed");
    // Five days pass without a success.
    await api.sql`UPDATE webhook_endpoints SET failing_since = now() - interval '5 days 1 minute' WHERE partner_id = ${partner.partnerId}::uuid AND external_id = ${ep.id}`;
    const deliveryId = await ping(ep.id);
    await settled(ep.id, deliveryId, "failed");
    const endpoint = (await request("GET", `/webhook-endpoints/${ep.id}`)).body.endpoint;
    expect(endpoint.enabled).toBe(false);
    expect(endpoint.disabledReason).toMatch(/failed/i);
    expect((await webhooks.service.endpointStates()).disabled_failing).toBeGreaterThanOrEqual(1);
    // One failed attempt of that delivery: the endpoint was disabled by it, not retried.
    expect((await delivery(ep.id, deliveryId)).attemptCount).toBe(1);
  });
});

describe("secret rotation", () => {
  test("for 24 hours after rotate-secret every delivery carries two signatures, one per secret; then only the new one", async () => {
    const ep = await newEndpoint();
    const rotated = await request("POST", `/webhook-endpoints/${ep.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const newSecret: string = rotated.body.secret;
    expect(newSecret).not.toBe(ep.secret);
    expect(Date.parse(rotated.body.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23.9 * 3600 * 1000);

    await settled(ep.id, await ping(ep.id), "delivered");
    const [during] = receiver.requests(ep.path);
    expect(during!.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    // A receiver still on the old secret and one already on the new accept the same request.
    expect(verified(during!, ep.secret).type).toBe("ping");
    expect(verified(during!, newSecret).type).toBe("ping");
    expect(() => verified(during!, `whsec_${randomBytes(32).toString("base64")}`)).toThrow();

    // The 24 hours pass.
    await api.sql`UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE partner_id = ${partner.partnerId}::uuid AND external_id = ${ep.id}`;
    await settled(ep.id, await ping(ep.id), "delivered");
    const after = receiver.requests(ep.path)[1]!;
    expect(after.headers["webhook-signature"]!.split(" ")).toHaveLength(1);
    expect(verified(after, newSecret).type).toBe("ping");
    expect(() => verified(after, ep.secret)).toThrow();
  });
});
