import { Elysia } from "elysia";
import { Type } from "@sinclair/typebox";
import { ErrorMessages, ErrorResponse, ListingBody, ListingPutResponse, ListingRecord, PageQuery } from "@pss/contracts";
import type { DocumentedResponses } from "../docs/openapi.ts";
import type { PartnerContext } from "../partner/partner-context.ts";
import { NotFoundError } from "../http/errors.ts";
import { variantsWithUrls } from "../media/variant-urls.ts";
import { parsePageQuery } from "../http/pagination.ts";
import { findListing, pageListings, statusHistories, type StatusChange, type StoredListing } from "./listing-repository.ts";
import { upsertListing } from "./listing-service.ts";

export function toListingRecord(l: StoredListing, history: StatusChange[], publicBaseUrl: string): ListingRecord {
  const d = l.document;
  return {
    externalListingId: l.externalId,
    serviceListingId: l.id,
    serviceListingUrl: `${publicBaseUrl}/listings/${l.id}`,
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
    createdAt: l.createdAt.toISOString(),
    updatedAt: l.updatedAt.toISOString(),
  };
}

export function createListingRoutes(ctx: PartnerContext) {
  const { sql, publicBaseUrl } = ctx.deps;
  return new Elysia({ name: "listing-routes" })
    .put(
      "/listings/:externalListingId",
      async ({ params, body, request, set }) => {
        const partner = ctx.principalOf(request);
        const externalId = ctx.externalId(params.externalListingId, "externalListingId");
        const result = await upsertListing(sql, partner.partnerId, externalId, body, ctx.traceOf(request));
        set.status = result.created ? 201 : 200;
        return {
          status: "success" as const,
          message: result.created ? ("Listing created" as const) : ("Listing updated" as const),
          serviceListingId: result.listingId,
          serviceListingUrl: `${publicBaseUrl}/listings/${result.listingId}`,
        };
      },
      {
        body: ListingBody,
        response: { 200: ListingPutResponse, 201: ListingPutResponse, 400: ErrorResponse, 401: ErrorResponse, 404: ErrorResponse },
        detail: {
          summary: "Create or update a listing",
          description:
            "201 when the external ID is new, 200 otherwise. With an inline broker, the broker is created or updated in the same transaction. An identical repeat changes nothing. Rules beyond the schema (400): on create, status, businessType, location (city, state, country, visibility) and brokerExternalId or broker are required; brokerExternalId and broker.externalBrokerId, if both are sent, must be equal; each photo URL may appear once.",
          responses: { 404: "Broker not found: brokerExternalId names no broker of this partner" } satisfies DocumentedResponses as never,
        },
      },
    )
    .get(
      "/listings/:externalListingId",
      async ({ params, request }) => {
        const partner = ctx.principalOf(request);
        const listing = await findListing(sql, partner.partnerId, ctx.externalId(params.externalListingId, "externalListingId"));
        if (!listing) throw new NotFoundError(ErrorMessages.listingNotFound);
        const history = await statusHistories(sql, [listing.id]);
        return { status: "success" as const, listing: toListingRecord(listing, history.get(listing.id)!, publicBaseUrl) };
      },
      {
        detail: {
          summary: "Read a listing back as stored, with its photo processing, search-index state and status history",
          responses: {
            200: { description: "The listing", schema: Type.Object({ status: Type.Literal("success"), listing: ListingRecord }) },
            404: ErrorMessages.listingNotFound,
          } satisfies DocumentedResponses as never,
        },
      },
    )
    .get(
      "/listings",
      async ({ query, request }) => {
        const partner = ctx.principalOf(request);
        const page = parsePageQuery(query);
        const { rows, nextCursor } = await pageListings(sql, { partnerId: partner.partnerId, ...page });
        const history = await statusHistories(sql, rows.map((r) => r.id));
        return {
          status: "success" as const,
          results: rows.map((l) => toListingRecord(l, history.get(l.id)!, publicBaseUrl)),
          nextCursor,
        };
      },
      {
        query: PageQuery,
        detail: {
          summary: "Page through all of the partner's listings (reconciliation)",
          responses: {
            200: { description: "One page; nextCursor is null on the last", schema: Type.Object({ status: Type.Literal("success"), results: Type.Array(ListingRecord), nextCursor: Type.Union([Type.String(), Type.Null()]) }) },
          } satisfies DocumentedResponses as never,
        },
      },
    );
}
