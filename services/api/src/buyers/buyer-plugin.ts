// Everything buyers reach, as one plugin for app.ts: JSON under /v1/ and the HTML pages.
import { Elysia } from "elysia";
import { createBuyerRoutes } from "./buyer-routes.ts";
import { createBuyerService, type BuyerDeps } from "./buyer-service.ts";
import { createPageRoutes } from "./pages/page-routes.ts";

export function createBuyerPlugin(deps: BuyerDeps) {
  const buyers = createBuyerService(deps);
  return new Elysia({ name: "buyers" }).use(createBuyerRoutes(buyers)).use(createPageRoutes(buyers, deps.publicBaseUrl));
}
