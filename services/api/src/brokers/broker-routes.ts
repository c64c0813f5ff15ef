import { Elysia } from "elysia";
import { Type } from "@sinclair/typebox";
import { BrokerBody, BrokerPutResponse, BrokerRecord, ErrorMessages, ErrorResponse, PageQuery } from "@pss/contracts";
import type { DocumentedResponses } from "../docs/openapi.ts";
import type { PartnerContext } from "../partner/partner-context.ts";
import { NotFoundError } from "../http/errors.ts";
import { variantsWithUrls } from "../media/variant-urls.ts";
import { parsePageQuery } from "../http/pagination.ts";
import { retryTransaction } from "../records/transaction-retry.ts";
import { findBroker, pageBrokers, type StoredBroker } from "./broker-repository.ts";
import { upsertBroker } from "./broker-service.ts";

export function toBrokerRecord(b: StoredBroker, publicBaseUrl: string): BrokerRecord {
  const d = b.document;
  return {
    externalBrokerId: b.externalId,
    serviceBrokerId: b.id,
    serviceProfileUrl: `${publicBaseUrl}/brokers/${b.id}`,
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
    createdAt: b.createdAt.toISOString(),
    updatedAt: b.updatedAt.toISOString(),
  };
}

export function createBrokerRoutes(ctx: PartnerContext) {
  const { sql, publicBaseUrl } = ctx.deps;
  return new Elysia({ name: "broker-routes" })
    .put(
      "/brokers/:externalBrokerId",
      async ({ params, body, request, set }) => {
        const partner = ctx.principalOf(request);
        const externalId = ctx.externalId(params.externalBrokerId, "externalBrokerId");
        const result = await retryTransaction(() => sql.begin((tx) => upsertBroker(tx, partner.partnerId, externalId, body, { trace: ctx.traceOf(request) })));
        set.status = result.created ? 201 : 200;
        return {
          status: "success" as const,
          message: result.created ? ("Broker created" as const) : ("Broker updated" as const),
          serviceBrokerId: result.brokerId,
          serviceProfileUrl: `${publicBaseUrl}/brokers/${result.brokerId}`,
        };
      },
      {
        body: BrokerBody,
        response: { 200: BrokerPutResponse, 201: BrokerPutResponse, 400: ErrorResponse, 401: ErrorResponse },
        detail: {
          summary: "Create or update a broker",
          description: "201 when the external ID is new, 200 otherwise. An identical repeat changes nothing. Rules beyond the types (400): each license gives a licenseNumber, a state or a country; each service area names a city, a county or a state.",
        },
      },
    )
    .get(
      "/brokers/:externalBrokerId",
      async ({ params, request }) => {
        const partner = ctx.principalOf(request);
        const broker = await findBroker(sql, partner.partnerId, ctx.externalId(params.externalBrokerId, "externalBrokerId"));
        if (!broker) throw new NotFoundError(ErrorMessages.brokerNotFound);
        return { status: "success" as const, broker: toBrokerRecord(broker, publicBaseUrl) };
      },
      {
        detail: {
          summary: "Read a broker back as stored, with the state of its avatar processing",
          responses: {
            200: { description: "The broker", schema: Type.Object({ status: Type.Literal("success"), broker: BrokerRecord }) },
            404: ErrorMessages.brokerNotFound,
          } satisfies DocumentedResponses as never,
        },
      },
    )
    .get(
      "/brokers",
      async ({ query, request }) => {
        const partner = ctx.principalOf(request);
        const page = parsePageQuery(query);
        const { rows, nextCursor } = await pageBrokers(sql, { partnerId: partner.partnerId, ...page });
        return {
          status: "success" as const,
          results: rows.map((b) => toBrokerRecord(b, publicBaseUrl)),
          nextCursor,
        };
      },
      {
        query: PageQuery,
        detail: {
          summary: "Page through all of the partner's brokers (reconciliation)",
          responses: {
            200: { description: "One page; nextCursor is null on the last", schema: Type.Object({ status: Type.Literal("success"), results: Type.Array(BrokerRecord), nextCursor: Type.Union([Type.String(), Type.Null()]) }) },
          } satisfies DocumentedResponses as never,
        },
      },
    );
}
