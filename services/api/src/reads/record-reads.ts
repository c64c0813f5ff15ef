// What the partner portal (services/portal) reads the way the partner API reads it, published as
// @pss/api/record-reads: one code path for a listing's report, quality, history and statistics and a broker's, so
// the portal can never show something the API would answer differently. Reads only; every function takes its
// client and the caller's scope (partner and mode).
export { findListing, type StoredListing, type StoredPhoto } from "../listings/listing-repository.ts";
export { findBroker, type StoredBroker } from "../brokers/broker-repository.ts";
export { storedBrokerQuality } from "../brokers/broker-quality.ts";
export { storedListingQuality } from "../listings/listing-quality.ts";
export { listingReportOf } from "../reports/listing-report-of.ts";
export { brokerHistory, listingHistory } from "../history/history-repository.ts";
export { readDailyStats } from "../stats/stats-reads.ts";
export type { RecordScope } from "../records/record-scope.ts";
