// POST /partner/v1/<records>/batch: many PUTs of one record kind in one request, one answer per item in request
// order. Listings and brokers differ only in what their BatchRecordKind names: schemas, and the single PUT's
// dry run, batch write and answer.
import { Elysia } from "elysia";
import { BATCH_MAX_ITEMS, PutQuery } from "@pss/contracts";
import type { TSchema } from "@sinclair/typebox";
import type postgres from "postgres";
import { documented, withExamples, type OperationExamples } from "../docs/openapi.ts";
import type { ItemOutcome } from "../listings/listing-batch.ts";
import type { WriteSource } from "../listings/listing-service.ts";
import type { PartnerContext } from "../partner/partner-context.ts";
import type { RecordScope } from "../records/record-scope.ts";
import { BATCH_REFUSED } from "./batch-docs.ts";
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
} from "./batch-items.ts";

/** Dry runs in flight at once: they only read. */
const DRY_RUN_CONCURRENCY = 8;

export interface BatchRecordKind<Body, Result> {
  /** "listing": the route is /listings/batch, an item is {externalListingId, listing}. */
  record: "listing" | "broker";
  /** The single PUT's body schema, checked per item (the batch's own schema leaves items' records open). */
  itemBody: TSchema;
  batchBody: TSchema;
  response: TSchema;
  description: string;
  examples: OperationExamples;
  /** The single PUT's dry-run answer body. */
  dryRun(sql: postgres.Sql, scope: RecordScope, externalId: string, body: Body): Promise<unknown>;
  upsert(
    sql: postgres.Sql,
    scope: RecordScope,
    items: { externalId: string; body: Body }[],
    source: WriteSource,
  ): Promise<ItemOutcome<Result>[]>;
  /** The single PUT's answer to a written item. */
  answer(ctx: PartnerContext, scope: RecordScope, result: Result): Promise<ItemAnswer>;
}

export function createBatchRoute<Body, Result>(ctx: PartnerContext, kind: BatchRecordKind<Body, Result>) {
  const { sql } = ctx.deps;
  const checkBody = createBodyCheck(kind.itemBody);
  const idField = kind.record === "listing" ? "externalListingId" : "externalBrokerId";
  type Valid = { externalId: string; body: Body };
  return ctx
    .idempotentPosts(new Elysia({ name: `${kind.record}-batch-routes` }))
    .use(ctx.auth)
    .post(
      `/${kind.record}s/batch`,
      async ({ body, request, set, partner }) => {
        // batchBody (validated above) has items: [{<idField>: string, <record>: object}].
        const items = (body as { items: Record<string, unknown>[] }).items;
        const idOf = (i: number) => String(items[i]?.[idField]);
        const dryRun = ctx.dryRun(request);
        refuseDuplicateIds(
          items.map((_, i) => idOf(i)),
          idField,
        );
        const { granted, retryAfter } = await ctx.chargeItems(partner, items.length);
        if (retryAfter !== null) set.headers["retry-after"] = String(retryAfter);

        // The single PUT's order: rate limit, body (text rules, schema), then the path's external ID.
        const states: ItemState<Valid>[] = items.map((item, i) => {
          if (i >= granted) return { refused: rateLimitedError(retryAfter ?? 1) };
          const refused = checkBody(item[kind.record]) ?? refusal(() => ctx.externalId(idOf(i), idField));
          return refused ? { refused } : { valid: { externalId: idOf(i), body: item[kind.record] as Body } };
        });
        const logger = ctx.loggerOf(request);
        const { requestId } = ctx.traceOf(request);
        const answers = new Array<ItemAnswer>(states.length);
        const valid: number[] = [];
        states.forEach((s, i) =>
          "refused" in s ? (answers[i] = errorAnswer(s.refused, logger, requestId)) : valid.push(i),
        );
        const item = (i: number) => (states[i] as { valid: Valid }).valid;

        if (dryRun) {
          await mapBounded(valid, DRY_RUN_CONCURRENCY, async (i) => {
            try {
              answers[i] = {
                httpStatus: 200,
                changed: false,
                body: await kind.dryRun(sql, partner, item(i).externalId, item(i).body),
              };
            } catch (err) {
              answers[i] = errorAnswer(err, logger, requestId);
            }
          });
        } else {
          const outcomes = await kind.upsert(sql, partner, valid.map(item), {
            origin: ctx.originOf(partner, request),
            trace: ctx.traceOf(request),
          });
          await Promise.all(
            outcomes.map(async (o, k) => {
              answers[valid[k] as number] =
                "ok" in o ? await kind.answer(ctx, partner, o.ok) : errorAnswer(o.error, logger, requestId);
            }),
          );
        }
        return {
          status: "success" as const,
          dryRun,
          counts: countAnswers(answers, dryRun),
          results: answers.map((a, i) => ({ [idField]: idOf(i), ...a })),
        };
      },
      {
        body: kind.batchBody,
        query: PutQuery,
        detail: {
          summary: `Create or update up to ${BATCH_MAX_ITEMS} ${kind.record}s in one request (or, with dryRun=true, only say what that would do)`,
          description: kind.description,
          ...withExamples(kind.examples),
          responses: documented({
            200: { description: "One result per item, in request order", schema: kind.response },
            400: BATCH_REFUSED,
          }),
        },
      },
    );
}
