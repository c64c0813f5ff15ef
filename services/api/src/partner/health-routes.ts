// GET /partner/v1/health: the URL answers and the key is accepted; it also says who the key is (partner, mode, lead
// tracking) and, for keys with lead tracking, the organization and office IDs the lead-count routes take, so a
// partner never has to be told them out of band. Writes nothing.
import { Elysia } from "elysia";
import { HealthResponse } from "@pss/contracts";
import { listOrganizations } from "../lead-counts/lead-count-repository.ts";
import { withExamples } from "../docs/openapi.ts";
import { HEALTH_DOCS, HEALTH_EXAMPLES } from "./health-docs.ts";
import type { PartnerContext } from "./partner-context.ts";

export function createHealthRoutes(ctx: PartnerContext) {
  return new Elysia({ name: "health-routes" }).use(ctx.auth).get(
    "/health",
    async ({ partner }) => ({
      status: "success" as const,
      timestamp: new Date().toISOString(),
      partnerId: partner.partnerId,
      mode: partner.mode,
      leadTracking: partner.leadTracking,
      // Office IDs are lead-count parameters: shown to the keys that may count leads, like the counts themselves.
      ...(partner.leadTracking ? { organizations: await listOrganizations(ctx.deps.sql, partner.partnerId) } : {}),
    }),
    {
      response: { 200: HealthResponse },
      detail: {
        summary: "Verify reachability and credentials, and say who the key is; changes nothing",
        description: HEALTH_DOCS["GET /health"],
        ...withExamples(HEALTH_EXAMPLES["GET /health"]),
      },
    },
  );
}
