// The receiver example docs/webhooks.md shows (docs/examples/webhook-receiver.ts, included there verbatim) run
// against real deliveries: the webhooks service sends to it on loopback, it verifies with standardwebhooks,
// handles a delivery once, refuses what is not signed with the endpoint's secret and ignores stale versions.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { createWebhookReceiver, type PssEvent } from "../../../docs/examples/webhook-receiver.ts";
import { call, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import { uniqueName } from "../../../test/support/env.ts";
import { startWebhooks, until, type WebhooksHarness } from "./support/webhooks-harness.ts";

const ROOT = join(import.meta.dir, "..", "..", "..");
let api: ApiHarness;
let webhooks: WebhooksHarness;
let partner: Partner;
let server: ReturnType<typeof createWebhookReceiver>;
let receiverUrl = "";
let secret = "";
let endpointId = "";
const handled: PssEvent[] = [];

beforeAll(async () => {
  api = await startApi({ relay: false });
  partner = await api.createPartner();
  endpointId = uniqueName("example");
  const res = await call(api.baseUrl, "PUT", `/partner/v1/webhook-endpoints/${endpointId}`, {
    key: partner.apiKey,
    body: { url: "https://placeholder.example/hooks", events: ["listing.published"] },
  });
  secret = res.body.secret;
  server = createWebhookReceiver({ secrets: [secret], onEvent: (event) => void handled.push(event) });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  receiverUrl = `http://127.0.0.1:${port}/pss-webhooks`;
  expect(
    (
      await call(api.baseUrl, "PUT", `/partner/v1/webhook-endpoints/${endpointId}`, {
        key: partner.apiKey,
        body: { url: receiverUrl },
      })
    ).status,
  ).toBe(200);
  webhooks = await startWebhooks({
    allowedHosts: [`127.0.0.1:${port}`],
    publicBaseUrl: api.baseUrl,
    partners: [partner.partnerId],
  });
});
afterAll(async () => {
  await webhooks?.stop();
  server?.close();
  if (api) {
    await api.sql`DELETE FROM webhook_endpoints WHERE partner_id = ${partner.partnerId}::uuid`;
    await api.stop();
  }
});

/** A request as the service would sign it (for the cases only a forger or a replay produces). */
function signed(body: object, id = crypto.randomUUID(), key = secret) {
  const text = JSON.stringify(body);
  const now = new Date();
  return {
    text,
    headers: {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
      "webhook-signature": new Webhook(key).sign(id, now, text),
    },
  };
}
const post = (request: { text: string; headers: Record<string, string> }) =>
  fetch(receiverUrl, { method: "POST", headers: request.headers, body: request.text }).then((r) => r.status);

test("the example is TypeScript that Node.js can run by stripping its types, as its header says", async () => {
  // Node's type stripping (what the header's `node webhook-receiver.ts` relies on) accepts exactly the syntax
  // TypeScript's erasableSyntaxOnly allows (no enums, namespaces or parameter properties), with type-only imports
  // marked as such (verbatimModuleSyntax).
  const tsc = Bun.spawn(
    [
      process.execPath,
      join(ROOT, "node_modules", "typescript", "bin", "tsc"),
      "--noEmit",
      "--erasableSyntaxOnly",
      "--verbatimModuleSyntax",
      "--strict",
      "--skipLibCheck",
      "--module",
      "nodenext",
      "--target",
      "es2022",
      "--types",
      "bun",
      join("docs", "examples", "webhook-receiver.ts"),
    ],
    { cwd: ROOT, stdout: "pipe", stderr: "pipe" },
  );
  const [out, code] = await Promise.all([new Response(tsc.stdout).text(), tsc.exited]);
  expect({ code, out }).toEqual({ code: 0, out: "" });
}, 180_000);

test("docs/webhooks.md shows the example exactly as it is tested", () => {
  const doc = readFileSync(join(ROOT, "docs", "webhooks.md"), "utf8");
  const example = readFileSync(join(ROOT, "docs", "examples", "webhook-receiver.ts"), "utf8");
  expect(doc).toContain("```ts\n" + example + "```");
});

test("the example receives a real delivery once, verified, and the service records it delivered", async () => {
  const ping = await call(api.baseUrl, "POST", `/partner/v1/webhook-endpoints/${endpointId}/test`, {
    key: partner.apiKey,
  });
  expect(ping.status).toBe(202);
  await until("the ping handled by the example", () => handled.some((e) => e.type === "ping"));
  expect(handled.filter((e) => e.type === "ping")).toEqual([
    { type: "ping", timestamp: expect.any(String), data: { endpointId, version: 2 } },
  ]);
  await until("the delivery recorded as delivered", async () => {
    const list = await call(api.baseUrl, "GET", `/partner/v1/webhook-deliveries?endpointId=${endpointId}`, {
      key: partner.apiKey,
    });
    return list.body.results.find(
      (d: { deliveryId: string; status: string }) => d.deliveryId === ping.body.deliveryId && d.status === "delivered",
    );
  });
});

test("the example refuses a forged or altered request, handles a repeat once, and ignores an older version", async () => {
  const event = (version: number) => ({
    type: "listing.published",
    timestamp: new Date().toISOString(),
    data: { serviceListingId: 987654, externalListingId: "L-1", status: "FOR_SALE", version },
  });
  const before = handled.length;
  const forged = signed(
    event(9),
    crypto.randomUUID(),
    `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64")}`,
  );
  expect(await post(forged)).toBe(400);
  const genuine = signed(event(5));
  expect(await post({ ...genuine, text: genuine.text.replace("FOR_SALE", "SOLD") })).toBe(400);
  expect(await post(genuine)).toBe(204);
  expect(await post(genuine)).toBe(204); // the same delivery again (at least once)
  expect(await post(signed(event(4)))).toBe(204); // older than what was applied: arrived late
  expect(await post(signed(event(6)))).toBe(204);
  expect(handled.slice(before).map((e) => e.data.version)).toEqual([5, 6]);
});
