// Routes only a test key may call (docs/sandbox.md); a live key gets 403 and nothing happens.
//   POST   /partner/v1/test/listings/{externalListingId}/leads   a simulated buyer inquiry on a test listing
//   DELETE /partner/v1/test-data                                  every test record of the partner, now
import { Elysia } from "elysia";
import { ErrorMessages, ErrorResponse, LeadAccepted, SimulatedLeadBody, TestDataDeleted } from "@pss/contracts";
import { documented, withExamples } from "../docs/openapi.ts";
import { ApiError, BadRequestError, NotFoundError } from "../http/errors.ts";
import { insertSimulatedLead } from "../leads/lead-repository.ts";
import type { PartnerContext } from "../partner/partner-context.ts";
import { purgeTestData } from "./test-data-purge.ts";
import { TEST_MODE_DOCS, TEST_MODE_EXAMPLES } from "./test-mode-docs.ts";

/** A simulated lead on a listing in a status buyers would not see: a real lead could not arrive either. */
export class ListingNotVisibleError extends ApiError {
  constructor(status: string) {
    super(
      409,
      `Leads arrive only for listings in a status buyers see (FOR_SALE, REVIEWING_OFFERS, PENDING_CONTRACT, UNDER_CONTRACT); this listing is ${status}`,
    );
  }
}

const TEST_ONLY = `${ErrorMessages.testModeOnly} (a live key)`;

export function createTestModeRoutes(ctx: PartnerContext) {
  const { sql } = ctx.deps;
  return ctx
    .idempotentPosts(new Elysia({ name: "test-mode-routes" }))
    .use(ctx.auth)
    .post(
      "/test/listings/:externalListingId/leads",
      async ({ params, body, request, set, partner }) => {
        ctx.testPrincipalOf(partner);
        const externalId = ctx.externalId(params.externalListingId, "externalListingId");
        const submittedAt = body.submittedAt === undefined ? null : new Date(body.submittedAt);
        if (submittedAt && submittedAt.getTime() > Date.now())
          throw new BadRequestError("submittedAt: must not be in the future");
        const leadId = Bun.randomUUIDv7();
        const outcome = await insertSimulatedLead(
          sql,
          partner,
          externalId,
          {
            id: leadId,
            name: body.name?.trim() || "Test Buyer",
            email: body.email ?? "test.buyer@example.com",
            phone: body.phone?.trim() || null,
            message: body.message?.trim() || "A simulated lead made with a test key.",
            submittedAt,
          },
          ctx.traceOf(request),
        );
        if (outcome.kind === "notFound") throw new NotFoundError(ErrorMessages.listingNotFound);
        if (outcome.kind === "notVisible") throw new ListingNotVisibleError(outcome.status);
        set.status = 202;
        return { status: "success" as const, leadId };
      },
      {
        body: SimulatedLeadBody,
        response: { 202: LeadAccepted, 400: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse },
        detail: {
          summary: "Simulate a buyer's lead on a test listing (test keys only)",
          description: TEST_MODE_DOCS["POST /test/listings/:externalListingId/leads"],
          ...withExamples(TEST_MODE_EXAMPLES["POST /test/listings/:externalListingId/leads"]),
          responses: documented({
            403: TEST_ONLY,
            404: `${ErrorMessages.listingNotFound}: no test listing with this external ID`,
            409: "The listing's status is not one buyers see, so no lead could arrive",
          }),
        },
      },
    )
    .delete(
      "/test-data",
      async ({ partner }) => {
        ctx.testPrincipalOf(partner);
        const deleted = await purgeTestData(sql, { partnerId: partner.partnerId });
        return { status: "success" as const, deleted };
      },
      {
        response: { 200: TestDataDeleted, 403: ErrorResponse },
        detail: {
          summary: "Delete every test record of the partner now (test keys only)",
          description: TEST_MODE_DOCS["DELETE /test-data"],
          ...withExamples(TEST_MODE_EXAMPLES["DELETE /test-data"]),
          responses: documented({ 403: TEST_ONLY }),
        },
      },
    );
}
