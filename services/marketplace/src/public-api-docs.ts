// The public JSON routes as the partner API's OpenAPI document shows them (GET /partner/v1/openapi.json covers the
// partner routes and these, which partners' integrations call under the same base URL). Built from the very route
// plugins the marketplace serves, on handlers that are never called, so the document cannot drift from the routes.
import { Elysia } from "elysia";
import { silentLogger } from "@pss/service-kit";
import type { BuyerService } from "./buyers/buyer-service.ts";
import { createBuyerRoutes } from "./buyers/buyer-routes.ts";
import { createLeadIntakeRoutes } from "./leads/lead-routes.ts";
import type { LeadIntakeDeps } from "./leads/lead-service.ts";

/** One operation: method, path template and its declared schemas and `detail`. */
export interface RouteDeclaration {
  method: string;
  path: string;
  hooks: Record<string, unknown>;
}

const notServed = (): never => {
  throw new Error("public-api-docs: declarations only, never served");
};

function declaredRoutes(): RouteDeclaration[] {
  const buyers: BuyerService = {
    search: notServed,
    findPlace: notServed,
    listing: notServed,
    broker: notServed,
    goneListing: notServed,
    similarListings: notServed,
  };
  // The intake's pool is never queried either: a client that refuses every query.
  const sql = new Proxy(() => notServed(), { get: () => notServed }) as unknown as LeadIntakeDeps["sql"];
  const app = new Elysia()
    .use(createBuyerRoutes(buyers))
    .use(createLeadIntakeRoutes({ sql, logger: silentLogger, traces: { of: notServed, logger: notServed } }));
  return app.routes.map((r) => ({ method: r.method, path: r.path, hooks: r.hooks as Record<string, unknown> }));
}

/** In the order the document lists them (the order they were served in when the API held them). */
export const PUBLIC_API_OPERATIONS: readonly RouteDeclaration[] = declaredRoutes();
