// POST /partner/v1/brokers/batch: many broker PUTs in one request, one answer per item in request order.
import { Elysia } from "elysia";
import { BATCH_MAX_ITEMS, BrokerBatchBody, BrokerBatchResponse, BrokerBody, PutQuery } from "@pss/contracts";
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
import { BATCH_ABOUT, BATCH_REFUSED } from "../listings/listing-batch-docs.ts";
import type { PartnerContext } from "../partner/partner-context.ts";
import { brokerDryRunAnswer, brokerPutAnswer } from "./broker-answers.ts";
import { upsertBrokerBatch } from "./broker-batch.ts";
import { dryRunBroker } from "./broker-service.ts";

const DRY_RUN_CONCURRENCY = 8;

export function createBrokerBatchRoutes(ctx: PartnerContext) {
  const { sql } = ctx.deps;
  const checkBody = createBodyCheck(BrokerBody);
  return new Elysia({ name: "broker-batch-routes" }).use(ctx.auth).post(
    "/brokers/batch",
    async ({ body, request, set, partner }) => {
      const dryRun = ctx.dryRun(request);
      refuseDuplicateIds(
        body.items.map((item) => item.externalBrokerId),
        "externalBrokerId",
      );
      const { granted, retryAfter } = await ctx.chargeItems(partner, body.items.length);
      if (retryAfter !== null) set.headers["retry-after"] = String(retryAfter);

      const states: ItemState<{ externalId: string; body: BrokerBody }>[] = body.items.map((item, i) => {
        if (i >= granted) return { refused: rateLimitedError(retryAfter!) };
        const refused =
          checkBody(item.broker) ?? refusal(() => ctx.externalId(item.externalBrokerId, "externalBrokerId"));
        return refused
          ? { refused }
          : { valid: { externalId: item.externalBrokerId, body: item.broker as BrokerBody } };
      });
      const logger = ctx.loggerOf(request);
      const { requestId } = ctx.traceOf(request);
      const answers = new Array<ItemAnswer>(states.length);
      const valid: number[] = [];
      states.forEach((s, i) =>
        "refused" in s ? (answers[i] = errorAnswer(s.refused, logger, requestId)) : valid.push(i),
      );
      const item = (i: number) => (states[i] as { valid: { externalId: string; body: BrokerBody } }).valid;

      if (dryRun) {
        await mapBounded(valid, DRY_RUN_CONCURRENCY, async (i) => {
          try {
            answers[i] = {
              httpStatus: 200,
              changed: false,
              body: brokerDryRunAnswer(await dryRunBroker(sql, partner, item(i).externalId, item(i).body)),
            };
          } catch (err) {
            answers[i] = errorAnswer(err, logger, requestId);
          }
        });
      } else {
        const outcomes = await upsertBrokerBatch(sql, partner, valid.map(item), {
          origin: ctx.originOf(partner, request),
          trace: ctx.traceOf(request),
        });
        await Promise.all(
          outcomes.map(async (o, k) => {
            answers[valid[k]!] =
              "ok" in o ? await brokerPutAnswer(ctx, partner, o.ok) : errorAnswer(o.error, logger, requestId);
          }),
        );
      }
      return {
        status: "success" as const,
        dryRun,
        counts: countAnswers(answers, dryRun),
        results: answers.map((a, i) => ({ externalBrokerId: body.items[i]!.externalBrokerId, ...a })),
      };
    },
    {
      body: BrokerBatchBody,
      query: PutQuery,
      detail: {
        summary: `Create or update up to ${BATCH_MAX_ITEMS} brokers in one request (or, with dryRun=true, only say what that would do)`,
        description: BATCH_ABOUT,
        responses: documented({
          200: { description: "One result per item, in request order", schema: BrokerBatchResponse },
          400: BATCH_REFUSED,
        }),
      },
    },
  );
}
