// @pss/partner-sdk: a typed client for the Partner Syndication Service partner API, webhook verification,
// local validation against the API's OpenAPI document, and the building blocks of the pss-sync CLI.
export { createPartnerClient, SDK_VERSION } from "./client/partner-client.ts";
export type {
  BrokerPutResult,
  CallOptions,
  DryRunPutResult,
  LeadCountOptions,
  ListingPutResult,
  ListOptions,
  PartnerClient,
  PartnerClientOptions,
  PutOptions,
} from "./client/partner-client.ts";
export type { DeliveryFilter, PageOptions, WebhooksClient } from "./client/webhooks-client.ts";
export type { HistoryOptions } from "./client/record-extras.ts";
export { PssApiError, PssError, PssNetworkError, parseRetryAfter, type ErrorDetail } from "./client/errors.ts";
export {
  backoffDelay,
  createRetryingFetch,
  isRetryableStatus,
  type FetchLike,
  type RetryInfo,
  type RetryOptions,
} from "./client/retrying-fetch.ts";
export {
  signWebhook,
  verifyWebhook,
  WebhookVerificationError,
  type VerifiedWebhook,
  type VerifyOptions,
  type WebhookHeaders,
} from "./webhooks/verify-webhook.ts";
export {
  createRecordValidator,
  problemsSentence,
  type FieldProblem,
  type RecordKind,
  type RecordValidator,
} from "./validation/record-validator.ts";
export type * from "./types.ts";
