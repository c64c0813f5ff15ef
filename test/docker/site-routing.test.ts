// Every balancer routes a path by one rule, @pss/contracts site-routing.ts (issue 41): the partner API's paths to the
// API, every other path to the marketplace. This holds HAProxy's configuration (compose), npm start's local balancer
// and both services' own routes to it; the chart's Ingress is held to it in test/kubernetes/chart-lint.test.ts.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { PARTNER_API_EXACT_PATHS, PARTNER_API_PATH_PREFIXES, servedByPartnerApi } from "@pss/contracts";
import { createAuthenticator } from "../../packages/http-kit/src/index.ts";
import { silentLogger } from "@pss/service-kit";
import { createApp } from "../../services/api/src/app.ts";
import { createMarketplace } from "../../services/marketplace/src/app.ts";
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
  test("HAProxy sends exactly the partner API's prefixes and paths to the API and every other path to the marketplace", () => {
    const cfg = readFileSync(join(ROOT, "images/balancer/haproxy.cfg"), "utf8");
    const acl = (kind: string) =>
      [...cfg.matchAll(new RegExp(`^\\s*acl partner_api ${kind} (\\S+)\\s*$`, "gm"))].map((m) => m[1]);
    expect(acl("path_beg")).toEqual([...PARTNER_API_PATH_PREFIXES]);
    expect(acl("path")).toEqual([...PARTNER_API_EXACT_PATHS]);
    expect(cfg).toMatch(/^\s*use_backend api if partner_api\s*$/m);
    expect(cfg).toMatch(/^\s*default_backend marketplace\s*$/m);
    // Compose's backends: every api and every marketplace replica through Docker's DNS.
    const backends = readFileSync(join(ROOT, "images/balancer/backend-compose.cfg"), "utf8");
    expect(backends).toMatch(/^backend api\n(?:.*\n)*?\s*server-template api \d+ api:8080 /m);
    expect(backends).toMatch(/^backend marketplace\n(?:.*\n)*?\s*server-template marketplace \d+ marketplace:8088 /m);
  });

  test("npm start's local balancer routes by the same function", () => {
    const source = readFileSync(join(ROOT, "scripts/local-balancer.ts"), "utf8");
    expect(source).toContain('import { servedByPartnerApi } from "@pss/contracts"');
    expect(source).toMatch(/servedByPartnerApi\(url\.pathname\) \? opts\.apiUrl : opts\.marketplaceUrl/);
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
    expect(partner.filter((p) => !servedByPartnerApi(p))).toEqual([]);
    expect(buyer.filter((p) => servedByPartnerApi(p))).toEqual([]);
  });

  test("every route the API serves falls on the API's side, and every route the marketplace serves on its own", async () => {
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
      const apiRoutes = routesOf(api);
      const marketRoutes = routesOf(marketplace);
      expect(apiRoutes.length).toBeGreaterThan(20);
      expect(marketRoutes.length).toBeGreaterThan(10);
      const path = (route: string) => route.slice(route.indexOf(" ") + 1);
      expect(apiRoutes.filter((r) => !servedByPartnerApi(path(r)))).toEqual([]);
      expect(marketRoutes.filter((r) => servedByPartnerApi(path(r)))).toEqual([]);
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
