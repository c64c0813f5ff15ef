// POST /partner/v1/listings/batch: many listing PUTs in one request, one answer per item in request order.
import { Elysia } from "elysia";
import { BATCH_MAX_ITEMS, ListingBatchBody, ListingBatchResponse, ListingBody, PutQuery } from "@pss/contracts";
import {
  countAnswers,
  createBodyCheck,
  errorAnswer,
  mapBounded,
  rateLimitedError,
  refusal,
  refuseDuplicateIds,
  type ItemAnswer,
  type ItemState,
} from "../batch/batch-items.ts";
import { documented } from "../docs/openapi.ts";
import type { PartnerContext } from "../partner/partner-context.ts";
import { listingPutAnswer } from "./listing-answers.ts";
import { upsertListingBatch } from "./listing-batch.ts";
import { dryRunListing } from "./listing-service.ts";
import { LISTING_BATCH_DOCS, BATCH_REFUSED } from "./listing-batch-docs.ts";

/** Dry runs in flight at once: they only read. */
const DRY_RUN_CONCURRENCY = 8;

export function createListingBatchRoutes(ctx: PartnerContext) {
  const { sql } = ctx.deps;
  const checkBody = createBodyCheck(ListingBody);
  return new Elysia({ name: "listing-batch-routes" }).use(ctx.auth).post(
    "/listings/batch",
    async ({ body, request, set, partner }) => {
      const dryRun = ctx.dryRun(request);
      refuseDuplicateIds(
        body.items.map((item) => item.externalListingId),
        "externalListingId",
      );
      const { granted, retryAfter } = await ctx.chargeItems(partner, body.items.length);
      if (retryAfter !== null) set.headers["retry-after"] = String(retryAfter);

      // The single PUT's order: rate limit, body (text rules, schema), then the path's external ID.
      const states: ItemState<{ externalId: string; body: ListingBody }>[] = body.items.map((item, i) => {
        if (i >= granted) return { refused: rateLimitedError(retryAfter!) };
        const refused =
          checkBody(item.listing) ?? refusal(() => ctx.externalId(item.externalListingId, "externalListingId"));
        return refused
          ? { refused }
          : { valid: { externalId: item.externalListingId, body: item.listing as ListingBody } };
      });
      const logger = ctx.loggerOf(request);
      const { requestId } = ctx.traceOf(request);
      const answers = new Array<ItemAnswer>(states.length);
      const valid: number[] = [];
      states.forEach((s, i) =>
        "refused" in s ? (answers[i] = errorAnswer(s.refused, logger, requestId)) : valid.push(i),
      );
      const item = (i: number) => (states[i] as { valid: { externalId: string; body: ListingBody } }).valid;

      if (dryRun) {
        await mapBounded(valid, DRY_RUN_CONCURRENCY, async (i) => {
          try {
            answers[i] = {
              httpStatus: 200,
              changed: false,
              body: await dryRunListing(sql, partner, item(i).externalId, item(i).body),
            };
          } catch (err) {
            answers[i] = errorAnswer(err, logger, requestId);
          }
        });
      } else {
        const outcomes = await upsertListingBatch(sql, partner, valid.map(item), {
          origin: ctx.originOf(partner, request),
          trace: ctx.traceOf(request),
        });
        await Promise.all(
          outcomes.map(async (o, k) => {
            answers[valid[k]!] =
              "ok" in o ? await listingPutAnswer(ctx, partner, o.ok) : errorAnswer(o.error, logger, requestId);
          }),
        );
      }
      return {
        status: "success" as const,
        dryRun,
        counts: countAnswers(answers, dryRun),
        results: answers.map((a, i) => ({ externalListingId: body.items[i]!.externalListingId, ...a })),
      };
    },
    {
      body: ListingBatchBody,
      query: PutQuery,
      detail: {
        summary: `Create or update up to ${BATCH_MAX_ITEMS} listings in one request (or, with dryRun=true, only say what that would do)`,
        description: LISTING_BATCH_DOCS["POST /listings/batch"],
        responses: documented({
          200: { description: "One result per item, in request order", schema: ListingBatchResponse },
          400: BATCH_REFUSED,
        }),
      },
    },
  );
}
