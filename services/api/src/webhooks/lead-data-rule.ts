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
//   check: a request of a key without lead tracking that NAMES lead data (body `events` with lead.received,
//   `eventType=lead.received`, an endpointId or deliveryId of such an endpoint, in the path or the query) gets
//   401 "Unauthorized", the lead-count routes' answer, whatever else is wrong with it.
// - The scope (WebhookScope.leadData, in inScope()): every SQL statement of the webhook routes leaves such
//   endpoints out for such a key. Lists therefore omit them and their deliveries (the key learns not even that
//   they exist), and a subscription made between the guard and the statement finds nothing rather than
//   changing a lead endpoint.
import { isUuid } from "@pss/contracts";
import type { Principal } from "../auth/authenticator.ts";
import { UnauthorizedError } from "../http/errors.ts";
import type { PartnerContext } from "../partner/partner-context.ts";

export const LEAD_EVENT = "lead.received";

/** The 401 the OpenAPI document states on every webhook route. */
export const LEAD_DATA_UNAUTHORIZED =
  "Missing, malformed, unknown or revoked key; or a key without lead-tracking permission naming lead data: lead.received in events or eventType, or an endpoint that is or ever was subscribed to lead.received (its deliveries included). Lists leave such endpoints and their deliveries out for such a key.";

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

export function createLeadDataGuard(ctx: PartnerContext) {
  const { sql } = ctx.deps;

  async function leadEndpointNamed(p: Principal, externalIds: string[]): Promise<boolean> {
    if (externalIds.length === 0) return false;
    const [row] = await sql`
      SELECT 1 FROM webhook_endpoints
      WHERE partner_id = ${p.partnerId} AND mode = ${p.mode} AND external_id = ANY(${externalIds}::text[]) AND carries_lead_data
      LIMIT 1`;
    return row !== undefined;
  }

  async function leadDeliveryNamed(p: Principal, deliveryId: string): Promise<boolean> {
    const [row] = await sql`
      SELECT 1 FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE d.id = ${deliveryId.toLowerCase()}::uuid AND e.partner_id = ${p.partnerId} AND e.mode = ${p.mode}
        AND (e.carries_lead_data OR d.event_type = ${LEAD_EVENT})`;
    return row !== undefined;
  }

  /** 401 when a key without lead tracking names lead data; nothing for a key with it. */
  return async function leadDataGuard(req: GuardedRequest): Promise<void> {
    const principal = req.partner;
    if (principal.leadTracking) return;
    if (namesLeadEvent(req)) throw new UnauthorizedError();
    const endpointIds = [...asList(req.params?.endpointId), ...asList(req.query?.endpointId)].filter(
      (v): v is string => typeof v === "string",
    );
    if (await leadEndpointNamed(principal, endpointIds)) throw new UnauthorizedError();
    const deliveryId = req.params?.deliveryId;
    if (typeof deliveryId === "string" && isUuid(deliveryId) && (await leadDeliveryNamed(principal, deliveryId)))
      throw new UnauthorizedError();
  };
}

/** A key's webhook scope: its partner and mode, and whether lead data is in it. */
export const webhookScopeOf = (p: Principal) => ({ partnerId: p.partnerId, mode: p.mode, leadData: p.leadTracking });
