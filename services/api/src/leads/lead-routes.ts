// POST /v1/listings/{serviceListingId}/leads: a buyer's inquiry. Public (no key); see docs/leads.md.
import { Elysia } from "elysia";
import { ErrorMessages, ErrorResponse, isServiceId, LeadAccepted, LeadBody } from "@pss/contracts";
import { documented, withExamples } from "../docs/openapi.ts";
import { BadRequestError } from "../http/errors.ts";
import type { RequestTraces } from "../http/request-trace.ts";
import { idempotentPosts, keyScope } from "../http/idempotency.ts";
import { addressBucket, clientAddress } from "./client-address.ts";
import { submitLead, type LeadIntakeDeps } from "./lead-service.ts";
import { LEAD_DOCS, LEAD_EXAMPLES } from "./lead-docs.ts";

export type LeadIntakeOptions = Omit<LeadIntakeDeps, "sql" | "logger" | "idempotency">;

export function createLeadIntakeRoutes(deps: LeadIntakeDeps & LeadIntakeOptions & { traces: RequestTraces }) {
  const routes = new Elysia({ name: "lead-intake-routes" });
  // Idempotency-Key per client address (its rate-limit bucket): one buyer's keys never meet another's.
  if (deps.idempotency)
    idempotentPosts(routes, deps.idempotency, ({ request, server }) =>
      keyScope.address(addressBucket(clientAddress(request, server ?? null, deps.trustedProxies))),
    );
  return routes.post(
    "/v1/listings/:serviceListingId/leads",
    async ({ params, body, request, server, set }) => {
      if (!isServiceId(params.serviceListingId))
        throw new BadRequestError("serviceListingId must be a positive integer");
      const address = clientAddress(request, server, deps.trustedProxies);
      const { leadId } = await submitLead(deps, {
        listingId: params.serviceListingId,
        body,
        clientAddress: address,
        trace: deps.traces.of(request),
        log: deps.traces.logger(request),
      });
      set.status = 202;
      return { status: "success" as const, leadId };
    },
    {
      body: LeadBody,
      response: { 202: LeadAccepted, 400: ErrorResponse, 404: ErrorResponse, 429: ErrorResponse },
      detail: {
        summary: "Send a buyer's inquiry to the listing's broker (public, no key)",
        description: LEAD_DOCS["POST /v1/listings/:serviceListingId/leads"],
        ...withExamples(LEAD_EXAMPLES["POST /v1/listings/:serviceListingId/leads"]),
        responses: documented({
          404: `${ErrorMessages.listingNotFound}: no buyer-visible listing with this ID`,
          429: "Too many leads from this address (in all, or to this listing), or site-wide; wait Retry-After seconds",
        }),
      },
    },
  );
}
