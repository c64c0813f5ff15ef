// PUT/GET/DELETE /partner/v1/portal-users/{email} (issue 42): who may sign in to the partner portal, and whether they
// see lead figures. Only live keys manage them; only a key with lead tracking grants lead access.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uniqueName } from "../../../test/support/env.ts";
import { call, startApi, type ApiHarness, type Partner } from "./support/harness.ts";

let api: ApiHarness;
let withLeads: Partner;
let withoutLeads: Partner;

const address = () => `${uniqueName("staff")}@crm.example`.toLowerCase();
const put = (key: string, email: string, body: unknown = {}) =>
  call(api.baseUrl, "PUT", `/partner/v1/portal-users/${encodeURIComponent(email)}`, { key, body });

beforeAll(async () => {
  api = await startApi({ relay: false });
  withLeads = await api.createPartner({ leadTracking: true, test: true });
  withoutLeads = await api.createPartner({ leadTracking: false });
});
afterAll(() => api?.stop());

describe("inviting a portal user", () => {
  test("201 with the user on the first PUT, 200 after; the address is compared lower-cased", async () => {
    const email = address();
    const first = await put(
      withLeads.apiKey,
      email.replace(/^./, (c) => c.toUpperCase()),
      { leadAccess: true },
    );
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      status: "success",
      message: "Portal user invited",
      portalUser: { email, leadAccess: true, invitation: "pending", lastSignInAt: null },
    });
    const second = await put(withLeads.apiKey, email, { leadAccess: false });
    expect(second.status).toBe(200);
    expect(second.body.message).toBe("Portal user updated");
    expect(second.body.portalUser.leadAccess).toBe(false);
    const list = await call(api.baseUrl, "GET", "/partner/v1/portal-users", { key: withLeads.apiKey });
    expect(list.status).toBe(200);
    expect(list.body.portalUsers.map((u: { email: string }) => u.email)).toContain(email);
    // Another partner never sees them.
    const other = await call(api.baseUrl, "GET", "/partner/v1/portal-users", { key: withoutLeads.apiKey });
    expect(other.body.portalUsers.map((u: { email: string }) => u.email)).not.toContain(email);
  });

  test("a key without lead tracking cannot grant lead access (401, as the lead-count routes), but may invite without it", async () => {
    const email = address();
    const refused = await put(withoutLeads.apiKey, email, { leadAccess: true });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ status: "error", error: "Unauthorized" });
    const [none] = await api.sql`SELECT count(*)::int AS n FROM portal_users WHERE email = ${email}`;
    expect(none!.n).toBe(0);
    expect((await put(withoutLeads.apiKey, email, { leadAccess: false })).status).toBe(201);
    expect((await put(withoutLeads.apiKey, email)).body.portalUser.leadAccess).toBe(false);
  });

  test("a test key cannot manage portal users (403 saying to use a live key)", async () => {
    const res = await put(withLeads.test!.apiKey, address());
    expect(res.status).toBe(403);
    expect(res.body.error).toContain("live key");
    expect((await call(api.baseUrl, "GET", "/partner/v1/portal-users", { key: withLeads.test!.apiKey })).status).toBe(
      403,
    );
  });

  test("an address that is not one, or a body with unknown fields, is a 400", async () => {
    const bad = await put(withLeads.apiKey, "not-an-address");
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("email must be an e-mail address of at most 254 characters");
    const extra = await put(withLeads.apiKey, address(), { leadAccess: true, role: "admin" });
    expect(extra.status).toBe(400);
    const noKey = await call(api.baseUrl, "PUT", `/partner/v1/portal-users/${encodeURIComponent(address())}`, {
      body: {},
    });
    expect(noKey.status).toBe(401);
  });
});

describe("removing a portal user", () => {
  test("200 once, then 404; sessions go with the user", async () => {
    const email = address();
    await put(withLeads.apiKey, email);
    const [user] = await api.sql`SELECT id FROM portal_users WHERE email = ${email}`;
    await api.sql`INSERT INTO portal_sessions (id_hash, user_id, expires_at) VALUES (${Buffer.alloc(32, 7)}, ${user!.id}, now() + interval '1 day')`;
    const path = `/partner/v1/portal-users/${encodeURIComponent(email)}`;
    const removed = await call(api.baseUrl, "DELETE", path, { key: withLeads.apiKey });
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ status: "success", message: "Portal user removed" });
    const [left] = await api.sql`SELECT count(*)::int AS n FROM portal_sessions WHERE user_id = ${user!.id}`;
    expect(left!.n).toBe(0);
    const again = await call(api.baseUrl, "DELETE", path, { key: withLeads.apiKey });
    expect(again.status).toBe(404);
    expect(again.body.error).toBe("Portal user not found");
  });

  test("another partner's key cannot remove them", async () => {
    const email = address();
    await put(withLeads.apiKey, email);
    const res = await call(api.baseUrl, "DELETE", `/partner/v1/portal-users/${encodeURIComponent(email)}`, {
      key: withoutLeads.apiKey,
    });
    expect(res.status).toBe(404);
  });
});
