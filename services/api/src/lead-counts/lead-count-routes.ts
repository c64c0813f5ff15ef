// GET /partner/v1/offices/{officeId}/leads/count and /organizations/{organizationId}/leads/count.
import { Elysia } from "elysia";
import {
  ErrorMessages,
  ErrorResponse,
  isRecordId,
  LeadCountQuery,
  OfficeLeadCount,
  OrganizationLeadCount,
} from "@pss/contracts";
import { documented, withExamples } from "../docs/openapi.ts";
import { BadRequestError, UnauthorizedError } from "../http/errors.ts";
import type { PartnerContext } from "../partner/partner-context.ts";
import type { Principal } from "../auth/authenticator.ts";
import { parseDateRange } from "./date-range.ts";
import type { LeadCountCache } from "./lead-count-cache.ts";
import { createLeadCountService } from "./lead-count-service.ts";
import { LEAD_COUNT_DOCS, LEAD_COUNT_EXAMPLES } from "./lead-count-docs.ts";

export interface LeadCountOptions {
  /** Short-lived cache of answers; absent = every request reads PostgreSQL. */
  countCache?: LeadCountCache;
}

/** The pattern the OpenAPI document declares for these IDs (1 to 2147483647, no leading zeros). */
function parseId(raw: string, name: string): number {
  if (!isRecordId(raw)) throw new BadRequestError(`${name} must be a positive integer`);
  return Number(raw);
}

export function createLeadCountRoutes(ctx: PartnerContext, opts: LeadCountOptions) {
  const service = createLeadCountService({ sql: ctx.deps.sql, cache: opts.countCache });
  // Runs before schema validation, so a key without permission gets 401 whatever else is wrong, and every
  // query problem gets the same "dates must be ISO 8601" message.
  const check = (
    { partner, params, query }: { partner: Principal; params: Record<string, string>; query: Record<string, unknown> },
    idName: string,
  ) => {
    if (!partner.leadTracking) throw new UnauthorizedError();
    return {
      scope: { partnerId: partner.partnerId, mode: partner.mode },
      id: parseId(params[idName]!, idName),
      range: parseDateRange(query),
    };
  };
  const responses = { 400: ErrorResponse, 401: ErrorResponse, 404: ErrorResponse };

  return new Elysia({ name: "lead-count-routes" })
    .use(ctx.auth)
    .get(
      "/offices/:officeId/leads/count",
      (c) => {
        const { scope, id, range } = check(c, "officeId");
        return service.office(scope, id, range);
      },
      {
        transform: (c) => void check(c, "officeId"),
        query: LeadCountQuery,
        response: { 200: OfficeLeadCount, ...responses },
        detail: {
          summary: "Number of leads of one office",
          description: LEAD_COUNT_DOCS["GET /offices/:officeId/leads/count"],
          ...withExamples(LEAD_COUNT_EXAMPLES["GET /offices/:officeId/leads/count"]),
          responses: documented({
            400: "A rule beyond the schema (see the description) is refused the same way, with details [{path, message}] naming each field that breaks it.",
            404: `${ErrorMessages.officeNotFound}: no such office of this partner`,
          }),
        },
      },
    )
    .get(
      "/organizations/:organizationId/leads/count",
      (c) => {
        const { scope, id, range } = check(c, "organizationId");
        return service.organization(scope, id, range);
      },
      {
        transform: (c) => void check(c, "organizationId"),
        query: LeadCountQuery,
        response: { 200: OrganizationLeadCount, ...responses },
        detail: {
          summary: "Number of leads of an organization, with every office (zeros included)",
          description: LEAD_COUNT_DOCS["GET /organizations/:organizationId/leads/count"],
          ...withExamples(LEAD_COUNT_EXAMPLES["GET /organizations/:organizationId/leads/count"]),
          responses: documented({
            400: "A rule beyond the schema (see the description) is refused the same way, with details [{path, message}] naming each field that breaks it.",
            404: `${ErrorMessages.organizationNotFound}: no such organization of this partner`,
          }),
        },
      },
    );
}
