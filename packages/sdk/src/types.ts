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
export type ListingReport = Json<paths["/partner/v1/listings/{externalListingId}/report"]["get"]["responses"][200]>["report"];
export type ReportState = ListingReport["state"];
/** GET /partner/v1/listings/{externalListingId}/stats: daily views, impressions and (with lead tracking) inquiries. */
export type ListingStats = Json<paths["/partner/v1/listings/{externalListingId}/stats"]["get"]["responses"][200]>;
export type HealthResponse = Json<paths["/partner/v1/health"]["get"]["responses"][200]>;
export type OfficeLeadCount = Json<paths["/partner/v1/offices/{officeId}/leads/count"]["get"]["responses"][200]>;
export type OrganizationLeadCount = Json<paths["/partner/v1/organizations/{organizationId}/leads/count"]["get"]["responses"][200]>;

/**
 * The answer of a dry-run PUT (`?dryRun=true`): the API validates exactly as for a real PUT (same 400s),
 * stores and emits nothing, and says what the real PUT would do: `outcome` (wouldCreate, wouldUpdate, noChange)
 * and `changedPaths` (e.g. "financials.askingPrice", "photos"). The same shape for brokers and listings.
 */
export type DryRunResult = Extract<Json<ListingPath["put"]["responses"][200]>, { dryRun: true }>;

export type { paths, components } from "./generated/api.ts";
