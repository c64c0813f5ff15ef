// Buyers' JSON API, no authentication: search, a listing, a broker profile. Response shapes: PublicListing,
// PublicBroker, SearchResponse in @pss/contracts (tests check them; Elysia does not re-validate them per request).
import { Elysia } from "elysia";
import { Type } from "@sinclair/typebox";
import { ErrorMessages, PublicBroker, PublicListing, SearchQuery, SearchResponse } from "@pss/contracts";
import { documented, withExamples } from "../docs/openapi.ts";
import { NotFoundError } from "../http/errors.ts";
import type { BuyerService } from "./buyer-service.ts";
import { parseSearchQuery, rawQuery } from "./search-params.ts";
import type { StatsRecorder } from "../stats/stats-recorder.ts";
import { BUYER_DOCS, BUYER_EXAMPLES } from "./buyer-docs.ts";

/** `stats`: counts each hit as an impression and each listing read as a view (in memory; never slows the answer). */
export function createBuyerRoutes(buyers: BuyerService, stats?: StatsRecorder) {
  return new Elysia({ name: "buyer-routes" })
    .get(
      "/v1/listings",
      async ({ request, server }) => {
        const result = await buyers.search(parseSearchQuery(rawQuery(request)));
        stats?.shown(
          result.results.map((r) => r.serviceListingId),
          request,
          server,
        );
        return result;
      },
      {
        query: SearchQuery,
        detail: {
          summary: "Search buyer-visible listings",
          description: BUYER_DOCS["GET /v1/listings"],
          ...withExamples(BUYER_EXAMPLES["GET /v1/listings"]),
          responses: documented({
            200: { description: "One page of hits", schema: SearchResponse },
            400: "A rule beyond the schema (see the description) is refused the same way, with details [{path, message}] naming each field that breaks it.",
          }),
        },
      },
    )
    .get(
      "/v1/listings/:serviceListingId",
      async ({ params, request, server }) => {
        const listing = await buyers.listing(params.serviceListingId);
        if (!listing) throw new NotFoundError(ErrorMessages.listingNotFound);
        stats?.viewed(listing.serviceListingId, request, server);
        return { status: "success" as const, listing };
      },
      {
        detail: {
          summary: "A buyer-visible listing: public fields, ready photos, broker summary",
          ...withExamples(BUYER_EXAMPLES["GET /v1/listings/:serviceListingId"]),
          responses: documented({
            200: {
              description: "The listing",
              schema: Type.Object({ status: Type.Literal("success"), listing: PublicListing }),
            },
            404: `${ErrorMessages.listingNotFound}: no buyer-visible listing with this ID`,
          }),
        },
      },
    )
    .get(
      "/v1/brokers/:serviceBrokerId",
      async ({ params }) => {
        const broker = await buyers.broker(params.serviceBrokerId);
        if (!broker) throw new NotFoundError(ErrorMessages.brokerNotFound);
        return { status: "success" as const, broker };
      },
      {
        detail: {
          summary: "A broker's public profile with the broker's buyer-visible listings (no e-mail or phone)",
          ...withExamples(BUYER_EXAMPLES["GET /v1/brokers/:serviceBrokerId"]),
          responses: documented({
            200: {
              description: "The broker",
              schema: Type.Object({ status: Type.Literal("success"), broker: PublicBroker }),
            },
            404: `${ErrorMessages.brokerNotFound}: no broker with this ID`,
          }),
        },
      },
    );
}
