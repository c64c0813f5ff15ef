// The portal's spans, as main.ts serves it (serveTraced): each page's server span is named by its route template and
// carries the signed-in person's partner.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTracing } from "@pss/service-kit";
import { startApi, type ApiHarness } from "../../api/test/support/harness.ts";
import { startPortal, twoSignedIn, type PortalClient, type PortalHarness } from "./support/portal-harness.ts";

const sent: Record<string, unknown>[] = [];
// Exported to an array (the store's intake, as JSON bodies), every request sampled.
const tracing = createTracing(
  { zipkinUrl: "http://127.0.0.1:9/api/v2/spans", sampleRatio: 1, serviceName: "pss-portal" },
  {
    export: {
      fetch: async (_url, init) => {
        sent.push(...(JSON.parse(String(init.body)) as Record<string, unknown>[]));
        return new Response(null, { status: 202 });
      },
    },
  },
);

let api: ApiHarness;
let portal: PortalHarness;
let person: PortalClient;
let partnerId: string;

beforeAll(async () => {
  api = await startApi({ relay: false });
  portal = await startPortal({ publicBaseUrl: api.baseUrl, invitations: false, tracing });
  const partner = await api.createPartner({ leadTracking: true });
  partnerId = partner.partnerId;
  ({ withLeads: person } = await twoSignedIn(portal, api.baseUrl, partner.apiKey, "tracing"));
}, 60_000);
afterAll(async () => {
  await portal?.stop();
  await api?.stop();
  await tracing.shutdown();
});

test("a page's span is named by its route template and carries the partner; the sign-in page's has no partner", async () => {
  expect((await person.get("/portal/live/listings?q=nothing")).status).toBe(200);
  expect((await portal.client().get("/portal/sign-in")).status).toBe(200);
  await tracing.flush();
  const named = (name: string) => sent.filter((s) => s.name === name.toLowerCase() || s.name === name);
  const listings = named("GET /portal/:mode/listings");
  expect(listings.length).toBeGreaterThan(0);
  const tags = listings.at(-1)!.tags as Record<string, string>;
  expect(tags["pss.partner_id"]).toBe(partnerId);
  expect(tags["http.route"]).toBe("/portal/:mode/listings");
  expect(tags["url.path"]).toBe("/portal/live/listings");
  const signIn = named("GET /portal/sign-in");
  expect(signIn.length).toBeGreaterThan(0);
  expect((signIn.at(-1)!.tags as Record<string, string>)["pss.partner_id"]).toBeUndefined();
});
