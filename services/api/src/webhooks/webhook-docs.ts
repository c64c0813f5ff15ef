// The OpenAPI prose of the webhook routes (webhook-routes.ts), kept out of the route definitions so
// those read as code. The document (GET /partner/v1/openapi.json) shows each text exactly as written here.
import { MAX_REPLAY_EVENTS } from "@pss/contracts";

const RESEND_BUDGET_PROSE =
  "the daily re-send budget (retry, recover, replay and test together, per partner over the last 24 hours: one " +
  "for endpoints carrying lead data and one for the others; WEBHOOK_RESEND_DAILY_BUDGET, 10,000 by default)";

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
