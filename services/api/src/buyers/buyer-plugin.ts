// Everything buyers reach, as one plugin for app.ts: JSON under /v1/ and the HTML pages.
import { Elysia } from "elysia";
import type { Logger } from "@pss/service-kit";
import type { LeadIntakeDeps } from "../leads/lead-service.ts";
import { createBuyerRoutes } from "./buyer-routes.ts";
import { createBuyerService, type BuyerDeps } from "./buyer-service.ts";
import { createPageRoutes } from "./pages/page-routes.ts";
import type { StatsRecorder } from "../stats/stats-recorder.ts";

export interface BuyerPluginDeps extends BuyerDeps {
  logger: Logger;
  /** The inquiry form posts into the same intake, with the same limiters, as the JSON lead route. */
  leads: LeadIntakeDeps;
  maxBodyBytes: number;
  sitemapPageSize?: number;
  /** Counts views and impressions; absent = no counting. */
  stats?: StatsRecorder;
}

export function createBuyerPlugin(deps: BuyerPluginDeps) {
  const buyers = createBuyerService(deps);
  return new Elysia({ name: "buyers" }).use(createBuyerRoutes(buyers, deps.stats)).use(
    createPageRoutes({
      buyers,
      sql: deps.sql,
      publicBaseUrl: deps.publicBaseUrl,
      logger: deps.logger,
      leads: deps.leads,
      maxBodyBytes: deps.maxBodyBytes,
      sitemapPageSize: deps.sitemapPageSize,
      stats: deps.stats,
    }),
  );
}
