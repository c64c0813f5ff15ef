import { expect, test } from "bun:test";
import {
  applyEndpointBody,
  canonicalEvents,
  missingOnCreate,
  sameDocument,
  type EndpointDocument,
} from "./webhook-endpoint-document.ts";

const stored: EndpointDocument = {
  url: "https://crm.example.com/hooks",
  events: ["listing.published", "lead.received"],
  description: "CRM",
  enabled: true,
};

test("an update keeps what it omits, replaces the event list, and null clears the description", () => {
  expect(applyEndpointBody(stored, { events: ["lead.received"] })).toEqual({ ...stored, events: ["lead.received"] });
  expect(applyEndpointBody(stored, { description: null })).toEqual({ ...stored, description: null });
  expect(applyEndpointBody(stored, { enabled: false })).toEqual({ ...stored, enabled: false });
});

test("events are kept in one order, so the same subscription spelled differently is an identical repeat", () => {
  expect(canonicalEvents(["lead.received", "listing.published"])).toEqual(["listing.published", "lead.received"]);
  const repeated = applyEndpointBody(stored, {
    url: stored.url,
    events: ["lead.received", "listing.published"],
  }) as EndpointDocument;
  expect(sameDocument(repeated, stored)).toBe(true);
});

test("creating needs url and events; enabled defaults to true", () => {
  const doc = applyEndpointBody(null, { description: "only a description" });
  expect(doc.enabled).toBe(true);
  expect(missingOnCreate(doc).map((d) => d.path)).toEqual(["url", "events"]);
  expect(missingOnCreate(applyEndpointBody(null, { url: "https://x.example/h", events: ["lead.received"] }))).toEqual(
    [],
  );
});
