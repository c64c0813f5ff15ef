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

/** The JSON body of an operation's 2xx answers. */
type Success<Op> = Op extends { responses: infer R }
  ? { [K in keyof R]: K extends 200 | 201 | 202 ? Json<R[K]> : never }[keyof R]
  : never;
type EndpointPath = paths["/partner/v1/webhook-endpoints/{endpointId}"];

/** The body of PUT /partner/v1/webhook-endpoints/{endpointId} (create: url and events; update: any subset). */
export type WebhookEndpointBody = Json<NonNullable<EndpointPath["put"]["requestBody"]>>;
/** The answer of that PUT: the endpoint, and its signing secret once, when it was created. */
export type WebhookEndpointPutResponse = Success<EndpointPath["put"]>;
export type WebhookEndpointRecord = Json<EndpointPath["get"]["responses"][200]>["endpoint"];
export type WebhookSecretRotation = Success<paths["/partner/v1/webhook-endpoints/{endpointId}/rotate-secret"]["post"]>;
export type WebhookTestQueued = Success<paths["/partner/v1/webhook-endpoints/{endpointId}/test"]["post"]>;
export type WebhookRecoverQueued = Success<paths["/partner/v1/webhook-endpoints/{endpointId}/recover"]["post"]>;
/** The body of POST …/replay: a change-feed range (afterSequence, throughSequence), a time range, or both. */
export type WebhookReplayBody = Json<
  NonNullable<paths["/partner/v1/webhook-endpoints/{endpointId}/replay"]["post"]["requestBody"]>
>;
export type WebhookReplayQueued = Success<paths["/partner/v1/webhook-endpoints/{endpointId}/replay"]["post"]>;
type DeliveriesGet = paths["/partner/v1/webhook-deliveries"]["get"];
export type WebhookDeliveryQuery = NonNullable<NonNullable<DeliveriesGet["parameters"]["query"]>>;
export type WebhookDelivery = Json<DeliveriesGet["responses"][200]>["results"][number];
export type WebhookRetryQueued = Success<paths["/partner/v1/webhook-deliveries/{deliveryId}/retry"]["post"]>;
/** One version of a listing or broker, newest first (GET …/history). */
export type ListingHistoryEntry = Json<
  paths["/partner/v1/listings/{externalListingId}/history"]["get"]["responses"][200]
>["results"][number];
export type BrokerHistoryEntry = Json<
  paths["/partner/v1/brokers/{externalBrokerId}/history"]["get"]["responses"][200]
>["results"][number];
/** The body of POST /partner/v1/test/listings/{externalListingId}/leads (test keys only). */
export type SimulatedLeadBody = Json<
  NonNullable<paths["/partner/v1/test/listings/{externalListingId}/leads"]["post"]["requestBody"]>
>;
export type SimulatedLeadAccepted = Success<paths["/partner/v1/test/listings/{externalListingId}/leads"]["post"]>;
export type TestDataDeleted = Success<paths["/partner/v1/test-data"]["delete"]>;

export type { paths, components } from "./generated/api.ts";
