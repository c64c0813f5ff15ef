import { Elysia } from "elysia";
import { Type } from "@sinclair/typebox";
import {
  DryRunResponse,
  ErrorMessages,
  ErrorResponse,
  HistoryQuery,
  ListingBody,
  ListingHistoryResponse,
  ListingPutResponse,
  ListingRecord,
  PageQuery,
  PutQuery,
} from "@pss/contracts";
import { documented, withExamples } from "../docs/openapi.ts";
import type { PartnerContext } from "../partner/partner-context.ts";
import { NotFoundError } from "../http/errors.ts";
import { variantsWithUrls } from "../media/variant-urls.ts";
import { parseHistoryQuery, parsePageQuery } from "../http/pagination.ts";
import { listingHistory } from "../history/history-repository.ts";
import {
  findListing,
  pageListings,
  statusHistories,
  type StatusChange,
  type StoredListing,
} from "./listing-repository.ts";
import { dryRunListing } from "./listing-service.ts";
import { listingPutAnswer } from "./listing-answers.ts";
import { createListingBatchRoutes } from "./listing-batch-routes.ts";
import { storedListingQuality } from "../quality/record-quality.ts";
import { LISTING_DOCS, LISTING_EXAMPLES } from "./listing-docs.ts";

/** `url`: the public page, or a test record's preview link (PartnerContext.listingUrl); media URLs from `publicBaseUrl`. */
export function toListingRecord(
  l: StoredListing,
  history: StatusChange[],
  url: string,
  publicBaseUrl: string,
): ListingRecord {
  const d = l.document;
  return {
    externalListingId: l.externalId,
    serviceListingId: l.id,
    serviceListingUrl: url,
    mode: l.mode,
    brokerExternalId: l.brokerExternalId,
    serviceBrokerId: l.brokerId,
    status: d.status,
    businessType: d.businessType,
    location: {
      streetAddress1: d.location.streetAddress1 ?? null,
      city: d.location.city,
      state: d.location.state,
      postalCode: d.location.postalCode ?? null,
      country: d.location.country,
      visibility: d.location.visibility,
    },
    title: d.title ?? null,
    description: d.description ?? null,
    descriptionOptimized: l.descriptionOptimized,
    establishedAt: d.establishedAt ?? null,
    financials: d.financials ?? {},
    property: d.property ?? {},
    financing: d.financing ?? {},
    photos: l.photos.map((p) => ({ ...p, variants: variantsWithUrls(p.variants, publicBaseUrl) })),
    statusHistory: history,
    searchIndex: { state: l.indexState },
    ...storedListingQuality(l),
    createdAt: l.createdAt.toISOString(),
    updatedAt: l.updatedAt.toISOString(),
  };
}

export function createListingRoutes(ctx: PartnerContext) {
  const { sql } = ctx.deps;
  return new Elysia({ name: "listing-routes" })
    .use(ctx.auth)
    .use(createListingBatchRoutes(ctx))
    .put(
      "/listings/:externalListingId",
      async ({ params, body, request, set, partner }) => {
        const externalId = ctx.externalId(params.externalListingId, "externalListingId");
        if (ctx.dryRun(request)) return dryRunListing(sql, partner, externalId, body);
        const result = await ctx.deps.listingWrites.upsert(partner, externalId, body, {
          origin: ctx.originOf(partner, request),
          trace: ctx.traceOf(request),
        });
        const answer = await listingPutAnswer(ctx, partner, result);
        set.status = answer.httpStatus;
        return answer.body;
      },
      {
        body: ListingBody,
        query: PutQuery,
        response: {
          200: Type.Union([ListingPutResponse, DryRunResponse]),
          201: ListingPutResponse,
          400: ErrorResponse,
          401: ErrorResponse,
          404: ErrorResponse,
        },
        detail: {
          summary: "Create or update a listing (or, with dryRun=true, only say what that would do)",
          description: LISTING_DOCS["PUT /listings/:externalListingId"],
          ...withExamples(LISTING_EXAMPLES["PUT /listings/:externalListingId"]),
          responses: documented({
            400: "A rule beyond the schema (see the description) is refused the same way, with details [{path, message}] naming each field that breaks it.",
            404: "Broker not found: brokerExternalId names no broker of this partner",
          }),
        },
      },
    )
    .get(
      "/listings/:externalListingId",
      async ({ params, partner }) => {
        const listing = await findListing(sql, partner, ctx.externalId(params.externalListingId, "externalListingId"));
        if (!listing) throw new NotFoundError(ErrorMessages.listingNotFound);
        const history = await statusHistories(sql, [listing.id]);
        return {
          status: "success" as const,
          listing: toListingRecord(
            listing,
            history.get(listing.id)!,
            await ctx.listingUrl(partner, listing.id),
            ctx.deps.publicBaseUrl,
          ),
        };
      },
      {
        detail: {
          summary: "Read a listing back as stored, with its photo processing, search-index state and status history",
          ...withExamples(LISTING_EXAMPLES["GET /listings/:externalListingId"]),
          responses: documented({
            200: {
              description: "The listing",
              schema: Type.Object({ status: Type.Literal("success"), listing: ListingRecord }),
            },
            404: ErrorMessages.listingNotFound,
          }),
        },
      },
    )
    .get(
      "/listings/:externalListingId/history",
      async ({ params, query, partner }) => {
        const externalId = ctx.externalId(params.externalListingId, "externalListingId");
        const page = await listingHistory(sql, partner, externalId, parseHistoryQuery(query));
        if (!page) throw new NotFoundError(ErrorMessages.listingNotFound);
        return { status: "success" as const, ...page };
      },
      {
        query: HistoryQuery,
        detail: {
          summary: "The listing's change history, newest first",
          description: LISTING_DOCS["GET /listings/:externalListingId/history"],
          ...withExamples(LISTING_EXAMPLES["GET /listings/:externalListingId/history"]),
          responses: documented({
            200: { description: "One page; nextCursor is null on the last", schema: ListingHistoryResponse },
            404: ErrorMessages.listingNotFound,
          }),
        },
      },
    )
    .get(
      "/listings",
      async ({ query, partner }) => {
        const page = parsePageQuery(query);
        const { rows, nextCursor } = await pageListings(sql, { scope: partner, ...page });
        const history = await statusHistories(
          sql,
          rows.map((r) => r.id),
        );
        const urls = await Promise.all(rows.map((l) => ctx.listingUrl(partner, l.id)));
        return {
          status: "success" as const,
          results: rows.map((l, i) => toListingRecord(l, history.get(l.id)!, urls[i]!, ctx.deps.publicBaseUrl)),
          nextCursor,
        };
      },
      {
        query: PageQuery,
        detail: {
          summary: "Page through all of the partner's listings (reconciliation)",
          ...withExamples(LISTING_EXAMPLES["GET /listings"]),
          responses: documented({
            200: {
              description: "One page; nextCursor is null on the last",
              schema: Type.Object({
                status: Type.Literal("success"),
                results: Type.Array(ListingRecord),
                nextCursor: Type.Union([Type.String(), Type.Null()]),
              }),
            },
          }),
        },
      },
    );
}
