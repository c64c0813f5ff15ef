import { Elysia } from "elysia";
import { Type } from "@sinclair/typebox";
import {
  BrokerBody,
  BrokerHistoryResponse,
  BrokerPutResponse,
  BrokerRecord,
  DryRunResponse,
  ErrorMessages,
  ErrorResponse,
  HistoryQuery,
  PageQuery,
  PutQuery,
} from "@pss/contracts";
import { documented, withExamples } from "../docs/openapi.ts";
import type { PartnerContext } from "../partner/partner-context.ts";
import { NotFoundError } from "../http/errors.ts";
import { variantsWithUrls } from "../media/variant-urls.ts";
import { parseHistoryQuery, parsePageQuery } from "../http/pagination.ts";
import { brokerHistory } from "../history/history-repository.ts";
import { retryTransaction } from "../records/transaction-retry.ts";
import { findBroker, pageBrokers, type StoredBroker } from "./broker-repository.ts";
import { dryRunBroker, upsertBroker } from "./broker-service.ts";
import { brokerDryRunAnswer, brokerPutAnswer } from "./broker-answers.ts";
import { storedBrokerQuality } from "../quality/record-quality.ts";
import { createBrokerBatchRoutes } from "./broker-batch-routes.ts";
import { BROKER_DOCS, BROKER_EXAMPLES } from "./broker-docs.ts";

/** `url`: the public profile, or a test record's preview link (PartnerContext.brokerUrl); media URLs from `publicBaseUrl`. */
export function toBrokerRecord(b: StoredBroker, url: string, publicBaseUrl: string): BrokerRecord {
  const d = b.document;
  return {
    externalBrokerId: b.externalId,
    serviceBrokerId: b.id,
    serviceProfileUrl: url,
    mode: b.mode,
    officeId: b.officeId,
    name: d.name,
    email: d.email,
    phone: d.phone ?? null,
    avatarUrl: d.avatarUrl ?? null,
    forwardingEmail: d.forwardingEmail ?? null,
    profile: d.profile ?? {},
    licenses: d.licenses ?? [],
    serviceAreas: d.serviceAreas ?? [],
    avatar: d.avatarUrl
      ? {
          url: d.avatarUrl,
          state: (b.avatar.state ?? "pending") as "pending" | "ready" | "failed",
          failureReason: b.avatar.failureReason,
          warning: b.avatar.warning,
          width: b.avatar.width,
          height: b.avatar.height,
          variants: variantsWithUrls(b.avatar.variants, publicBaseUrl),
        }
      : null,
    ...storedBrokerQuality(b),
    createdAt: b.createdAt.toISOString(),
    updatedAt: b.updatedAt.toISOString(),
  };
}

export function createBrokerRoutes(ctx: PartnerContext) {
  const { sql } = ctx.deps;
  return new Elysia({ name: "broker-routes" })
    .use(ctx.auth)
    .use(createBrokerBatchRoutes(ctx))
    .put(
      "/brokers/:externalBrokerId",
      async ({ params, body, request, set, partner }) => {
        const externalId = ctx.externalId(params.externalBrokerId, "externalBrokerId");
        if (ctx.dryRun(request)) return brokerDryRunAnswer(await dryRunBroker(sql, partner, externalId, body));
        const origin = ctx.originOf(partner, request);
        const result = await retryTransaction(() =>
          sql.begin((tx) => upsertBroker(tx, partner, externalId, body, { origin, trace: ctx.traceOf(request) })),
        );
        const answer = await brokerPutAnswer(ctx, partner, result);
        set.status = answer.httpStatus;
        return answer.body;
      },
      {
        body: BrokerBody,
        query: PutQuery,
        response: {
          200: Type.Union([BrokerPutResponse, DryRunResponse]),
          201: BrokerPutResponse,
          400: ErrorResponse,
          401: ErrorResponse,
        },
        detail: {
          summary: "Create or update a broker (or, with dryRun=true, only say what that would do)",
          description: BROKER_DOCS["PUT /brokers/:externalBrokerId"],
          ...withExamples(BROKER_EXAMPLES["PUT /brokers/:externalBrokerId"]),
        },
      },
    )
    .get(
      "/brokers/:externalBrokerId",
      async ({ params, partner }) => {
        const broker = await findBroker(sql, partner, ctx.externalId(params.externalBrokerId, "externalBrokerId"));
        if (!broker) throw new NotFoundError(ErrorMessages.brokerNotFound);
        return {
          status: "success" as const,
          broker: toBrokerRecord(broker, await ctx.brokerUrl(partner, broker.id), ctx.deps.publicBaseUrl),
        };
      },
      {
        detail: {
          summary: "Read a broker back as stored, with the state of its avatar processing",
          ...withExamples(BROKER_EXAMPLES["GET /brokers/:externalBrokerId"]),
          responses: documented({
            200: {
              description: "The broker",
              schema: Type.Object({ status: Type.Literal("success"), broker: BrokerRecord }),
            },
            404: ErrorMessages.brokerNotFound,
          }),
        },
      },
    )
    .get(
      "/brokers/:externalBrokerId/history",
      async ({ params, query, partner }) => {
        const externalId = ctx.externalId(params.externalBrokerId, "externalBrokerId");
        const page = await brokerHistory(sql, partner, externalId, parseHistoryQuery(query));
        if (!page) throw new NotFoundError(ErrorMessages.brokerNotFound);
        return { status: "success" as const, ...page };
      },
      {
        query: HistoryQuery,
        detail: {
          summary: "The broker's change history, newest first",
          description: BROKER_DOCS["GET /brokers/:externalBrokerId/history"],
          ...withExamples(BROKER_EXAMPLES["GET /brokers/:externalBrokerId/history"]),
          responses: documented({
            200: { description: "One page; nextCursor is null on the last", schema: BrokerHistoryResponse },
            404: ErrorMessages.brokerNotFound,
          }),
        },
      },
    )
    .get(
      "/brokers",
      async ({ query, partner }) => {
        const page = parsePageQuery(query);
        const { rows, nextCursor } = await pageBrokers(sql, { scope: partner, ...page });
        const urls = await Promise.all(rows.map((b) => ctx.brokerUrl(partner, b.id)));
        return {
          status: "success" as const,
          results: rows.map((b, i) => toBrokerRecord(b, urls[i]!, ctx.deps.publicBaseUrl)),
          nextCursor,
        };
      },
      {
        query: PageQuery,
        detail: {
          summary: "Page through all of the partner's brokers (reconciliation)",
          ...withExamples(BROKER_EXAMPLES["GET /brokers"]),
          responses: documented({
            200: {
              description: "One page; nextCursor is null on the last",
              schema: Type.Object({
                status: Type.Literal("success"),
                results: Type.Array(BrokerRecord),
                nextCursor: Type.Union([Type.String(), Type.Null()]),
              }),
            },
          }),
        },
      },
    );
}
