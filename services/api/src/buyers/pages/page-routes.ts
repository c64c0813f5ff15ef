// The public HTML pages behind serviceListingUrl and serviceProfileUrl.
import { Elysia } from "elysia";
import type { BuyerService } from "../buyer-service.ts";
import { renderBrokerPage } from "./broker-page.ts";
import { notFoundPage } from "./status-pages.ts";
import { renderListingPage } from "./listing-page.ts";

export function createPageRoutes(buyers: BuyerService, publicBaseUrl: string) {
  return new Elysia({ name: "buyer-pages" })
    .get("/listings/:serviceListingId", async ({ params }) => {
      const listing = await buyers.listing(params.serviceListingId);
      return listing ? renderListingPage(listing) : notFoundPage("Listing", `${publicBaseUrl}/listings/${encodeURIComponent(params.serviceListingId)}`);
    })
    .get("/brokers/:serviceBrokerId", async ({ params }) => {
      const broker = await buyers.broker(params.serviceBrokerId);
      return broker ? renderBrokerPage(broker) : notFoundPage("Broker", `${publicBaseUrl}/brokers/${encodeURIComponent(params.serviceBrokerId)}`);
    });
}
