// What the partner portal (services/portal) does with webhooks, published as @pss/api/webhook-actions: the very
// functions the partner API's webhook routes call, so a resend, a replay, a rotated secret or a test event from the
// portal goes through the same scope (lead data), locks and re-send budget per partner and audience as one from a
// key (webhook-resend.ts). The portal passes the signed-in person's scope (their lead access as a key's lead
// tracking) and the same WEBHOOK_RESEND_DAILY_BUDGET.
export {
  listDeliveries,
  queuePing,
  recoverDeliveries,
  retryDelivery,
  LISTED_ATTEMPTS,
} from "./webhook-delivery-repository.ts";
export { replayEvents } from "./webhook-replay.ts";
export {
  findEndpoint,
  inScope,
  pageEndpoints,
  rotateSecret,
  toEndpointRecord,
  type StoredEndpoint,
  type WebhookScope,
} from "./webhook-endpoint-repository.ts";
export { generateWebhookSecret } from "./webhook-secrets.ts";
export { DEFAULT_RESEND_DAILY_BUDGET, type ActionOutcome } from "./webhook-resend.ts";
/** The API's typed errors (a replay's 400 and 429 among them): status and message, to answer them in a page. */
export { ApiError } from "@pss/http-kit";
