// Authentication is decided by the router: every registered partner route answers 401 without a valid key,
// whatever the request target looks like (absolute, or origin-form without Host) and whatever the body.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { call, startApi, type ApiHarness, type Partner } from "./support/harness.ts";
import { sendRaw } from "./support/raw-http.ts";

let api: ApiHarness;
let partner: Partner;
let port: number;
let partnerRoutes: { method: string; path: string }[];

beforeAll(async () => {
  api = await startApi({ relay: false });
  port = Number(new URL(api.baseUrl).port);
  partner = await api.createPartner({ leadTracking: true });
  partnerRoutes = api.routes.filter(
    (r) => r.path.startsWith("/partner/v1/") && r.path !== "/partner/v1/openapi.json" && !r.path.endsWith("*"),
  );
});
afterAll(() => api.stop());

/** A concrete path for a route pattern: numeric IDs where the API expects integers, names elsewhere. */
function concrete(path: string): string {
  return path.replace(/:([A-Za-z]+)/g, (_, name: string) =>
    /^(officeId|organizationId)$/.test(name) ? "1" : "guard-test-id",
  );
}

/** Credentials that must all be refused: none, unknown, a valid key after lowercase "bearer", Basic. */
const badCredentials = (): Record<string, string>[] => [
  {},
  { authorization: "Bearer pss_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" },
  { authorization: `bearer ${partner.apiKey}` },
  { authorization: "Basic dXNlcjpwYXNz" },
];

describe("every registered partner route", () => {
  test("the route table has the partner routes this test is about", () => {
    const names = partnerRoutes.map((r) => `${r.method} ${r.path}`);
    expect(names).toContain("GET /partner/v1/health");
    expect(names.some((n) => n.startsWith("PUT /partner/v1/listings/"))).toBe(true);
    expect(names.some((n) => n.startsWith("PUT /partner/v1/brokers/"))).toBe(true);
    expect(names.some((n) => n.includes("/leads/count"))).toBe(true);
    expect(partnerRoutes.length).toBeGreaterThanOrEqual(8);
  });

  test("answers 401 'Unauthorized' without a valid key, for an absolute request target, with or without a (bad) body", async () => {
    for (const route of partnerRoutes) {
      for (const headers of badCredentials()) {
        const bodies =
          route.method === "GET" ? [undefined] : [undefined, "{not json", JSON.stringify({ name: "x\u0000" })];
        for (const body of bodies) {
          const res = await call(api.baseUrl, route.method, concrete(route.path), { headers, body });
          expect({ route: `${route.method} ${route.path}`, status: res.status, body: res.body }).toEqual({
            route: `${route.method} ${route.path}`,
            status: 401,
            body: { status: "error", error: "Unauthorized" },
          });
        }
      }
    }
  });

  test("answers 401 without a key for an origin-form request target sent without Host (HTTP/1.0)", async () => {
    for (const route of partnerRoutes) {
      const body = route.method === "GET" ? "" : "{}";
      const head = `${route.method} ${concrete(route.path)} HTTP/1.0\r\n${body ? `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n` : ""}\r\n`;
      const res = await sendRaw(port, head + body);
      expect({ route: `${route.method} ${route.path}`, status: res.status, error: res.json?.error }).toEqual({
        route: `${route.method} ${route.path}`,
        status: 401,
        error: "Unauthorized",
      });
    }
  });

  test("with a valid key the same requests get past the guard (no 401)", async () => {
    for (const route of partnerRoutes) {
      const res = await call(api.baseUrl, route.method, concrete(route.path), {
        key: partner.apiKey,
        body: route.method === "GET" ? undefined : {},
      });
      expect({ route: `${route.method} ${route.path}`, unauthorized: res.status === 401 }).toEqual({
        route: `${route.method} ${route.path}`,
        unauthorized: false,
      });
    }
  });

  test("an unknown path under the prefix is 401 without a key and 404 with one", async () => {
    expect((await call(api.baseUrl, "GET", "/partner/v1/not-a-route")).status).toBe(401);
    expect((await call(api.baseUrl, "GET", "/partner/v1/not-a-route", { key: partner.apiKey })).status).toBe(404);
  });

  test("the OpenAPI document stays readable without a key", async () => {
    expect((await call(api.baseUrl, "GET", "/partner/v1/openapi.json")).status).toBe(200);
  });
});
