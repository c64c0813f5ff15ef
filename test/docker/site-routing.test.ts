// Every balancer routes a path by one rule, @pss/contracts site-routing.ts (issue 41): the partner API's paths to the
// API, /portal and /portal/… to the partner portal, every other path to the marketplace. This holds HAProxy's configuration (compose), npm start's local balancer
// and both services' own routes to it; the chart's Ingress is held to it in test/kubernetes/chart-lint.test.ts.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import {
  PARTNER_API_EXACT_PATHS,
  PARTNER_API_PATH_PREFIXES,
  PORTAL_EXACT_PATHS,
  PORTAL_PATH_PREFIXES,
  siteServiceOf,
} from "@pss/contracts";
import { createAuthenticator, parseTrustedProxies } from "../../packages/http-kit/src/index.ts";
import { silentLogger } from "@pss/service-kit";
import { createApp } from "../../services/api/src/app.ts";
import { createMarketplace } from "../../services/marketplace/src/app.ts";
import { createPortalApp } from "../../services/portal/src/app.ts";
import { testWebhookSecrets } from "../support/env.ts";

const ROOT = join(import.meta.dir, "..", "..");

/** A client that never connects: the apps are built to list their routes, never served here. */
function idleSql() {
  return postgres("postgres://nobody@127.0.0.1:1/none", { max: 1, connect_timeout: 1 });
}

function routesOf(app: { routes: { method: string; path: string }[] }): string[] {
  return app.routes.map((r) => `${r.method} ${r.path}`);
}

describe("site routing (the rule every balancer follows)", () => {
  test("HAProxy sends exactly the partner API's paths to the API, the portal's to the portal and every other path to the marketplace", () => {
    const cfg = readFileSync(join(ROOT, "images/balancer/haproxy.cfg"), "utf8");
    const acl = (name: string, kind: string) =>
      [...cfg.matchAll(new RegExp(`^\\s*acl ${name} ${kind} (\\S+)\\s*$`, "gm"))].map((m) => m[1]);
    expect(acl("partner_api", "path_beg")).toEqual([...PARTNER_API_PATH_PREFIXES]);
    expect(acl("partner_api", "path")).toEqual([...PARTNER_API_EXACT_PATHS]);
    expect(acl("portal_path", "path_beg")).toEqual([...PORTAL_PATH_PREFIXES]);
    expect(acl("portal_path", "path")).toEqual([...PORTAL_EXACT_PATHS]);
    const routing = [...cfg.matchAll(/^\s*((?:use|default)_backend .*?)\s*$/gm)].map((m) => m[1]);
    expect(routing).toEqual([
      "use_backend api if partner_api",
      "use_backend portal if portal_path",
      "default_backend marketplace",
    ]);
    // Compose's backends: every api, marketplace and portal replica through Docker's DNS.
    const backends = readFileSync(join(ROOT, "images/balancer/backend-compose.cfg"), "utf8");
    expect(backends).toMatch(/^backend api\n(?:.*\n)*?\s*server-template api \d+ api:8080 /m);
    expect(backends).toMatch(/^backend marketplace\n(?:.*\n)*?\s*server-template marketplace \d+ marketplace:8088 /m);
    expect(backends).toMatch(/^backend portal\n(?:.*\n)*?\s*server-template portal \d+ portal:8090 /m);
  });

  test("npm start's local balancer routes by the same function", () => {
    const source = readFileSync(join(ROOT, "scripts/local-balancer.ts"), "utf8");
    expect(source).toContain('import { siteServiceOf, type SiteService } from "@pss/contracts"');
    expect(source).toMatch(/targets\[siteServiceOf\(url\.pathname\)\]/);
    expect(source).toMatch(/api: opts\.apiUrl,\s*portal: opts\.portalUrl,\s*marketplace: opts\.marketplaceUrl,/);
  });

  test("the rule's answers for the paths partners and buyers use", () => {
    const partner = ["/partner/v1/listings/x", "/partner/v1/openapi.json", "/partner/v1/brokers/b", "/docs"];
    const buyer = [
      "/",
      "/listings",
      "/listings/12",
      "/v1/listings",
      "/v1/listings/1/leads",
      "/sitemap.xml",
      "/media/a.webp",
      "/partner",
      "/docs/x",
      "/partners/",
    ];
    const portal = ["/portal", "/portal/", "/portal/sign-in", "/portal/live/listings"];
    expect(partner.map(siteServiceOf)).toEqual(partner.map(() => "api"));
    expect(portal.map(siteServiceOf)).toEqual(portal.map(() => "portal"));
    expect([...buyer, "/portalx", "/portals/"].map(siteServiceOf)).toEqual(
      [...buyer, "/portalx", "/portals/"].map(() => "marketplace"),
    );
  });

  test("every route the API, the marketplace and the portal serve falls on its own service's side", async () => {
    const sql = idleSql();
    try {
      const api = createApp({
        sql,
        logger: silentLogger,
        authenticator: createAuthenticator({ sql, redis: undefined as never, logger: silentLogger }),
        partnerRateLimiter: { check: async () => null },
        publicBaseUrl: "https://market.example.test",
        maxBodyBytes: 1_048_576,
        webhookSecrets: testWebhookSecrets(),
      });
      const marketplace = createMarketplace({
        sql,
        logger: silentLogger,
        authenticator: createAuthenticator({ sql, redis: undefined as never, logger: silentLogger }),
        publicBaseUrl: "https://market.example.test",
        maxBodyBytes: 1_048_576,
      });
      // Built to list its routes: the sign-in, sessions and previews are never called here.
      const portal = createPortalApp({
        sql,
        logger: silentLogger,
        signIn: {} as never,
        sessions: {} as never,
        previews: {} as never,
        publicBaseUrl: "https://market.example.test",
        portalUrl: "https://market.example.test/portal",
        trustedProxies: parseTrustedProxies("").proxies,
        overviewCacheMs: 0,
        webhookSecrets: testWebhookSecrets(),
        resendDailyBudget: 10,
      });
      const apiRoutes = routesOf(api);
      const marketRoutes = routesOf(marketplace);
      const portalRoutes = routesOf(portal);
      expect(apiRoutes.length).toBeGreaterThan(20);
      expect(marketRoutes.length).toBeGreaterThan(10);
      expect(portalRoutes.length).toBeGreaterThan(5);
      const path = (route: string) => route.slice(route.indexOf(" ") + 1);
      expect(apiRoutes.filter((r) => siteServiceOf(path(r)) !== "api")).toEqual([]);
      expect(marketRoutes.filter((r) => siteServiceOf(path(r)) !== "marketplace")).toEqual([]);
      expect(portalRoutes.filter((r) => siteServiceOf(path(r)) !== "portal")).toEqual([]);
      // The buyers' routes the issue names are the marketplace's, the partner API's own are the API's.
      expect(marketRoutes).toEqual(
        expect.arrayContaining([
          "GET /v1/listings",
          "GET /listings/:serviceListingId",
          "POST /v1/listings/:serviceListingId/leads",
          "POST /listings/:serviceListingId/inquiry",
          "GET /sitemap.xml",
          "GET /preview/listings/:serviceListingId",
          "GET /media/:name",
          "POST /saved-searches",
        ]),
      );
      expect(apiRoutes).toEqual(expect.arrayContaining(["PUT /partner/v1/listings/:externalListingId", "GET /docs"]));
    } finally {
      await sql.end({ timeout: 1 });
    }
  });
});
