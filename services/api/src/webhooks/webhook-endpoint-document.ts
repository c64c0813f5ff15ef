// A webhook endpoint as the partner describes it, and how a PUT body changes it: the same semantics as listings
// (JSON Merge Patch: an omitted field keeps its value, null clears description; url and events are required on
// create). Events are kept in one canonical order, so two spellings of the same subscription are one record.
import { WEBHOOK_EVENT_TYPES, type WebhookEndpointBody, type WebhookEventType } from "@pss/contracts";
import type { ErrorDetail } from "@pss/http-kit";

export interface EndpointDocument {
  url: string;
  events: WebhookEventType[];
  description: string | null;
  enabled: boolean;
}

export function canonicalEvents(events: readonly WebhookEventType[]): WebhookEventType[] {
  return WEBHOOK_EVENT_TYPES.filter((t) => events.includes(t));
}

/** The document after the body; on create `url`/`events` may still be missing (see missingOnCreate). */
export function applyEndpointBody(
  current: EndpointDocument | null,
  body: WebhookEndpointBody,
): Partial<EndpointDocument> & { enabled: boolean; description: string | null } {
  return {
    url: body.url ?? current?.url,
    events: body.events ? canonicalEvents(body.events) : current?.events,
    description: body.description === undefined ? (current?.description ?? null) : body.description,
    enabled: body.enabled ?? current?.enabled ?? true,
  };
}

export function missingOnCreate(doc: Partial<EndpointDocument>): ErrorDetail[] {
  const missing: ErrorDetail[] = [];
  if (doc.url === undefined) missing.push({ path: "url", message: "is required when creating a webhook endpoint" });
  if (doc.events === undefined)
    missing.push({ path: "events", message: "is required when creating a webhook endpoint" });
  return missing;
}

export function sameDocument(a: EndpointDocument, b: EndpointDocument): boolean {
  return (
    a.url === b.url &&
    a.description === b.description &&
    a.enabled === b.enabled &&
    a.events.join(",") === b.events.join(",")
  );
}
