// The one rule for lead data on the webhook routes (docs/leads.md "Who may see lead data", docs/webhooks.md):
// lead counts are for keys with lead-tracking permission (spec section 5), and a lead.received delivery carries
// the office's lead count, so a key without that permission learns nothing about leads through webhooks either.
//
// What carries lead data: an endpoint that is, or has ever been, subscribed to lead.received (the
// carries_lead_data flag, set on the write that subscribes it and never cleared: its history may hold
// lead.received bodies, and its URL and secret decide where the next ones go), everything of such an endpoint
// (its secret, its deliveries of any type, a ping through it, re-sending), and lead.received itself.
//
// Two halves, applied once each:
// - The guard (createLeadDataGuard), which webhook-routes.ts installs on every webhook route before any other
//   check: a request of a key without lead tracking that names lead.received itself (body `events` with it,
//   `eventType=lead.received`) gets 401 "Unauthorized", the lead-count routes' answer, whatever else is wrong with
//   it. That reveals nothing: lead.received is a public event type, and the key lacks the permission.
// - The scope (WebhookScope.leadData, in inScope()): every SQL statement of the webhook routes leaves endpoints
//   carrying lead data (and so their deliveries) out for such a key. For it they do not exist: naming one by ID on
//   any route answers exactly as an unknown ID does (404 "Webhook endpoint not found" / "Webhook delivery not
//   found", an empty deliveries list), lists omit them, the endpoint limit and the replay budget leave them out,
//   and a subscription made meanwhile finds nothing rather than changing a lead endpoint. Endpoint IDs are per
//   audience (migration 0035): such a key's PUT of an ID only a lead endpoint holds creates an endpoint of its own
//   (201), so not even a create tells it the ID is taken. A key with lead tracking that names an ID both hold gets
//   the lead endpoint.
// - Becoming lead data: the PUT that first subscribes an endpoint to lead.received must name its url and answers a
//   new secret (webhook-endpoint-service.ts), so lead data never goes to a URL or under a secret only a key
//   without lead tracking chose.
// - Capacity, counters and delays (issue 37): re-sends to lead endpoints draw from a budget of their own
//   (webhook-resend.ts), and the webhooks service gives attempts to lead endpoints caps and worker slots of their
//   own, so nothing a key without lead tracking can time or count moves with lead deliveries.
import type { Principal } from "../auth/authenticator.ts";
import { UnauthorizedError } from "../http/errors.ts";

export const LEAD_EVENT = "lead.received";

/** The 401 the OpenAPI document states on every webhook route. */
export const LEAD_DATA_UNAUTHORIZED =
  "Missing, malformed, unknown or revoked key; or a key without lead-tracking permission naming lead.received in events or eventType. For such a key an endpoint that is or ever was subscribed to lead.received, and its deliveries, do not exist: named by ID they answer as an unknown ID does, and lists leave them out.";

/** The parts of a request the guard reads: raw, before schema validation (so 401 comes before any 400). */
export interface GuardedRequest {
  /** The caller (partner-context.ts's auth plugin derives it before this guard runs). */
  partner: Principal;
  params?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: unknown;
}

const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]);

/** Whether the request names lead.received as an event type (a subscription or a filter). */
function namesLeadEvent(req: GuardedRequest): boolean {
  const events =
    req.body !== null && typeof req.body === "object" && !Array.isArray(req.body)
      ? (req.body as Record<string, unknown>).events
      : undefined;
  return asList(events).includes(LEAD_EVENT) || asList(req.query?.eventType).includes(LEAD_EVENT);
}

export function createLeadDataGuard() {
  /** 401 when a key without lead tracking names lead.received; nothing for a key with it. */
  return function leadDataGuard(req: GuardedRequest): void {
    if (!req.partner.leadTracking && namesLeadEvent(req)) throw new UnauthorizedError();
  };
}

/** A key's webhook scope: its partner and mode, and whether lead data is in it. */
export const webhookScopeOf = (p: Principal) => ({ partnerId: p.partnerId, mode: p.mode, leadData: p.leadTracking });
