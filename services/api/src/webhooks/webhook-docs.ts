// The OpenAPI prose of the webhook routes (webhook-routes.ts), kept out of the route definitions so
// those read as code. The document (GET /partner/v1/openapi.json) shows each text exactly as written here.
import { MAX_REPLAY_EVENTS, WebhookErrorMessages } from "@pss/contracts";
import { REPLAY_BUDGET_HINT } from "./webhook-replay.ts";
import { DEFAULT_RESEND_DAILY_BUDGET, resendBudgetReached } from "./webhook-resend.ts";

// Partner words: the figure, not the operators' setting that changes it (docs/api-internals.md names that).
const RESEND_BUDGET_PROSE =
  "the daily re-send budget (retry, recover, replay and test together, per partner over the last 24 hours: one " +
  `for endpoints carrying lead data and one for the others, ${DEFAULT_RESEND_DAILY_BUDGET.toLocaleString("en-US")} ` +
  "deliveries each)";

/** Route descriptions, by method and path. */
export const WEBHOOK_DOCS = {
  "PUT /webhook-endpoints/:endpointId":
    "201 when the endpointId is new, with the signing secret (whsec_…) shown this once; 200 otherwise " +
    "(JSON Merge Patch: omitted fields keep their value, description null clears it). An identical repeat " +
    "changes nothing. Rules beyond the schema: on create (an endpointId this key's mode does not have " +
    'yet), url and events are required (400 with details [{path: "url"}, {path: "events"}] naming ' +
    "what is missing; an update may send any subset); subscribing to lead.received needs a key with " +
    "lead-tracking permission (401, before any other check), and for a key without it an endpoint that is " +
    "or ever was subscribed to lead.received does not exist (its ID answers as an unknown one, and a create " +
    "with an ID only such an endpoint holds creates an endpoint of this key's own: IDs are per audience; a " +
    "key with lead tracking naming an ID both hold gets the one carrying lead data). The PUT that subscribes " +
    "an existing endpoint to lead.received for the first time must give url (400 otherwise) and answers a new " +
    "secret, which replaces the old one at once. A key creates endpoints while it sees fewer than 20 " +
    "in its mode, and at most 20 carry lead data (409). An endpoint belongs to " +
    "the key's mode: one created with a test key (pss_test_…) receives only test records' events and is " +
    "seen only by test keys; a live key's only live ones (the same endpointId names one endpoint per " +
    "mode). enabled: true re-enables an endpoint that was disabled (by the partner, by a 410 answer, or " +
    "after failing for 5 days); enabled: false fails its pending deliveries (recover sends them again).",
  "POST /webhook-endpoints/:endpointId/rotate-secret":
    "The new secret is shown once. Rotating again within the 24 hours drops the oldest secret: only the " +
    "two latest sign.",
  "POST /webhook-endpoints/:endpointId/replay":
    `Every event of the key's partner and mode in the range (afterSequence < sequence <= throughSequence, ` +
    `the change feed's numbers; since <= time < until) whose type the endpoint subscribes to is queued ` +
    `for it, in sequence order, with the body the webhooks service sent or would have sent (data.sequence ` +
    `included), also when the endpoint was created after the events. An event this endpoint had already ` +
    `is sent again as that delivery (same webhook-id, fresh retry schedule). Rules beyond the schema (400 ` +
    `with details [{path, message}] naming the field): throughSequence must be greater than ` +
    `afterSequence, until later than since. At most ${MAX_REPLAY_EVENTS} events a request (400 beyond: ` +
    `narrow the range). Events are kept as long as the change feed keeps them. An event whose delivery to ` +
    `this endpoint is still pending is not queued again. Bounds (429 with Retry-After): one running replay ` +
    `per endpoint (while deliveries an earlier replay queued are pending), and ${RESEND_BUDGET_PROSE} (a ` +
    `range that would queue more than the whole budget is a 400). A replay that queues nothing answers 202 ` +
    `{queued: 0} whatever the bounds.`,
  "POST /webhook-endpoints/:endpointId/recover":
    "Each failed delivery of the endpoint created at or after since is queued again with its original " +
    "webhook-id and body and a fresh retry schedule, the oldest first, as many as " +
    `${RESEND_BUDGET_PROSE} has room for: notQueued counts those left failed (recover again later; with no ` +
    "room at all, 429 with Retry-After). A pending delivery is never queued twice.",
  "POST /webhook-deliveries/:deliveryId/retry":
    "Draws one delivery from " +
    `${RESEND_BUDGET_PROSE} (429 with Retry-After beyond it). A delivery already queued and not yet ` +
    "attempted is left as it is (202, nothing drawn). While an attempt of it is in flight, the retry waits " +
    "for that attempt to end (its outcome is not recorded) and then sends it again.",
  "POST /webhook-endpoints/:endpointId/test": `Draws one delivery from ${RESEND_BUDGET_PROSE} (429 with Retry-After beyond it).`,
} as const;

const ENDPOINT = {
  endpointId: "crm",
  url: "https://crm.acme-brokers.example/pss-webhooks",
  events: ["listing.published", "listing.unpublished", "listing.report.changed"],
  description: null,
  enabled: true,
  disabledReason: null,
  disabledAt: null,
  failingSince: null,
  previousSecretExpiresAt: null,
  version: 1,
  createdAt: "2026-05-01T12:05:00.000Z",
  updatedAt: "2026-05-01T12:05:00.000Z",
};
const NOT_FOUND = {
  summary: "No endpoint of yours has this ID",
  value: { status: "error", error: WebhookErrorMessages.endpointNotFound },
};
const DELIVERY_ID = "36849c3e-99bb-4b12-ab61-e96e334c98a3";
/** The 429 of a re-send beyond the daily budget (retry, recover, replay and test share it), `wanted` more. */
const budgetReached = (wanted: number, hint?: string) => ({
  summary: "The daily re-send budget is spent: wait Retry-After seconds",
  value: {
    status: "error",
    error: resendBudgetReached(DEFAULT_RESEND_DAILY_BUDGET, DEFAULT_RESEND_DAILY_BUDGET, wanted, hint),
  },
});

/** Each route's examples (docs/openapi.ts, OperationExamples), by method and path. */
export const WEBHOOK_EXAMPLES = {
  "PUT /webhook-endpoints/:endpointId": {
    request: {
      summary: "Create endpoint crm",
      params: { endpointId: "crm" },
      body: { url: ENDPOINT.url, events: ENDPOINT.events },
    },
    responses: {
      201: {
        summary: "Created: the signing secret is shown this once",
        value: {
          status: "success",
          message: "Webhook endpoint created",
          endpoint: ENDPOINT,
          secret: "whsec_uEDm5JvUAd0pKIRdlOpERpt1k4uqj28Wd37R8M/9j6E=",
        },
      },
      200: {
        summary: "Updated (the same body again changes nothing; no secret)",
        value: { status: "success", message: "Webhook endpoint updated", endpoint: ENDPOINT },
      },
      409: {
        summary: "A 21st endpoint",
        value: { status: "error", error: WebhookErrorMessages.tooManyEndpoints },
      },
    },
  },
  "GET /webhook-endpoints/:endpointId": {
    request: { summary: "Read endpoint crm", params: { endpointId: "crm" } },
    responses: {
      200: { summary: "Never its secret", value: { status: "success", endpoint: ENDPOINT } },
      404: NOT_FOUND,
    },
  },
  "GET /webhook-endpoints": {
    request: { summary: "Every endpoint, 100 a page", query: { limit: "100" } },
    responses: {
      200: { summary: "One page", value: { status: "success", results: [ENDPOINT], nextCursor: null } },
    },
  },
  "DELETE /webhook-endpoints/:endpointId": {
    request: { summary: "Delete endpoint crm", params: { endpointId: "crm" } },
    responses: {
      200: { summary: "Deleted", value: { status: "success", message: "Webhook endpoint deleted" } },
      404: NOT_FOUND,
    },
  },
  "POST /webhook-endpoints/:endpointId/rotate-secret": {
    request: { summary: "A new secret for endpoint crm", params: { endpointId: "crm" } },
    responses: {
      200: {
        summary: "The new secret; the previous one signs too until previousSecretExpiresAt",
        value: {
          status: "success",
          secret: "whsec_iit1ZqfUPWJQ23/MD7TONh0SQTAMcV6Ci32dHvRLXP0=",
          previousSecretExpiresAt: "2026-05-02T12:10:00.000Z",
        },
      },
      404: NOT_FOUND,
    },
  },
  "POST /webhook-endpoints/:endpointId/test": {
    request: { summary: "Ping endpoint crm", params: { endpointId: "crm" } },
    responses: {
      202: { summary: "A signed ping is on its way", value: { status: "success", deliveryId: DELIVERY_ID } },
      404: NOT_FOUND,
      409: {
        summary: "The endpoint is disabled",
        value: { status: "error", error: WebhookErrorMessages.endpointDisabled },
      },
      429: budgetReached(1),
    },
  },
  "POST /webhook-endpoints/:endpointId/recover": {
    request: {
      summary: "Send again what failed since May 1st",
      params: { endpointId: "crm" },
      query: { since: "2026-05-01T00:00:00Z" },
    },
    responses: {
      202: {
        summary: "Queued again: all three fitted in the re-send budget",
        value: { status: "success", requeued: 3, notQueued: 0 },
      },
      404: NOT_FOUND,
      429: budgetReached(1),
    },
  },
  "POST /webhook-endpoints/:endpointId/replay": {
    request: {
      summary: "Replay the whole feed kept to endpoint crm",
      params: { endpointId: "crm" },
      body: { afterSequence: 0 },
    },
    responses: {
      202: { summary: "Queued", value: { status: "success", queued: 2 } },
      404: NOT_FOUND,
      429: budgetReached(2, REPLAY_BUDGET_HINT),
    },
  },
  "GET /webhook-deliveries": {
    request: { summary: "The newest delivery of endpoint crm", query: { endpointId: "crm", limit: "1" } },
    responses: {
      200: {
        summary: "One page, newest first",
        value: {
          status: "success",
          results: [
            {
              deliveryId: DELIVERY_ID,
              endpointId: "crm",
              eventType: "ping",
              status: "delivered",
              createdAt: "2026-05-01T12:10:00.000Z",
              deliveredAt: "2026-05-01T12:10:00.210Z",
              nextAttemptAt: null,
              attemptCount: 1,
              lastStatusCode: 204,
              lastError: null,
              attempts: [{ attempt: 1, at: "2026-05-01T12:10:00.010Z", statusCode: 204, latencyMs: 200, error: null }],
              payload: { type: "ping", timestamp: "2026-05-01T12:10:00.000Z", data: { endpointId: "crm", version: 1 } },
            },
          ],
          nextCursor: null,
        },
      },
    },
  },
  "POST /webhook-deliveries/:deliveryId/retry": {
    request: { summary: "Send one delivery again now", params: { deliveryId: DELIVERY_ID } },
    responses: {
      202: { summary: "Queued", value: { status: "success", deliveryId: DELIVERY_ID } },
      404: {
        summary: "No delivery of yours has this ID",
        value: { status: "error", error: WebhookErrorMessages.deliveryNotFound },
      },
      429: budgetReached(1),
    },
  },
} as const;
