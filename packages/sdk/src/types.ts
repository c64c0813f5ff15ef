// Names for the shapes partners use most, taken from the generated types (src/generated/api.ts), so they
// follow the OpenAPI document.
import type { paths } from "./generated/api.ts";

type Json<T> = T extends { content: { "application/json": infer B } } ? B : never;
type BrokerPath = paths["/partner/v1/brokers/{externalBrokerId}"];
type ListingPath = paths["/partner/v1/listings/{externalListingId}"];

/** The body of PUT /partner/v1/brokers/{externalBrokerId}. */
export type BrokerBody = Json<NonNullable<BrokerPath["put"]["requestBody"]>>;
/** The body of PUT /partner/v1/listings/{externalListingId}. */
export type ListingBody = Json<NonNullable<ListingPath["put"]["requestBody"]>>;
export type BrokerPutResponse = Json<BrokerPath["put"]["responses"][201]>;
export type ListingPutResponse = Json<ListingPath["put"]["responses"][201]>;
/** A broker as stored (GET /partner/v1/brokers/{externalBrokerId}). */
export type BrokerRecord = Json<BrokerPath["get"]["responses"][200]>["broker"];
/** A listing as stored (GET /partner/v1/listings/{externalListingId}). */
export type ListingRecord = Json<ListingPath["get"]["responses"][200]>["listing"];
/** A quality warning on a PUT answer or a read-back: `{path, code, message}`; never blocking (docs/partner-api.md). */
export type QualityWarning = ListingRecord["warnings"][number];
export type WarningCode = QualityWarning["code"];
/** GET /partner/v1/listings/{externalListingId}/report: every processing step and the overall state. */
export type ListingReport = Json<
  paths["/partner/v1/listings/{externalListingId}/report"]["get"]["responses"][200]
>["report"];
export type ReportState = ListingReport["state"];
/** GET /partner/v1/listings/{externalListingId}/stats: daily views, impressions and (with lead tracking) inquiries. */
export type ListingStats = Json<paths["/partner/v1/listings/{externalListingId}/stats"]["get"]["responses"][200]>;
export type HealthResponse = Json<paths["/partner/v1/health"]["get"]["responses"][200]>;
export type OfficeLeadCount = Json<paths["/partner/v1/offices/{officeId}/leads/count"]["get"]["responses"][200]>;
export type OrganizationLeadCount = Json<
  paths["/partner/v1/organizations/{organizationId}/leads/count"]["get"]["responses"][200]
>;

/**
 * The answer of a dry-run PUT (`?dryRun=true`): the API validates exactly as for a real PUT (same 400s),
 * stores and emits nothing, and says what the real PUT would do: `outcome` (wouldCreate, wouldUpdate, noChange)
 * and `changedPaths` (e.g. "financials.askingPrice", "photos"). The same shape for brokers and listings.
 */
export type DryRunResult = Extract<Json<ListingPath["put"]["responses"][200]>, { dryRun: true }>;

type ListingBatchPath = paths["/partner/v1/listings/batch"]["post"];
type BrokerBatchPath = paths["/partner/v1/brokers/batch"]["post"];
/**
 * One item of POST /partner/v1/listings/batch: the external ID and the body its single PUT would carry. The
 * document leaves the item's body open (a bad body fails its item, not the batch), so the PUT's type is named here.
 */
export type ListingBatchItem = Omit<Json<NonNullable<ListingBatchPath["requestBody"]>>["items"][number], "listing"> & {
  listing: ListingBody;
};
export type BrokerBatchItem = Omit<Json<NonNullable<BrokerBatchPath["requestBody"]>>["items"][number], "broker"> & {
  broker: BrokerBody;
};
/** The answer of a batch: one result per item, in request order, each with the status and body its PUT would have got. */
export type ListingBatchResponse = Json<ListingBatchPath["responses"][200]>;
export type BrokerBatchResponse = Json<BrokerBatchPath["responses"][200]>;
export type ListingBatchResult = ListingBatchResponse["results"][number];
export type BrokerBatchResult = BrokerBatchResponse["results"][number];

/** One page of the change feed (GET /partner/v1/events). */
export type FeedPage = Json<paths["/partner/v1/events"]["get"]["responses"][200]>;
export type FeedEvent = FeedPage["results"][number];

export type { paths, components } from "./generated/api.ts";
