// Run as a process of its own by openapi-stability.test.ts, so that nothing has validated a request in it yet:
// the document served first, then a round of requests over every route (valid and invalid ones), then the
// document of an application built after that round, and the first application's again. Prints them as JSON.
import { call, sample, startApi } from "./harness.ts";

const first = await startApi({ relay: false });
const before = (await call(first.baseUrl, "GET", "/partner/v1/openapi.json")).body;

const partner = await first.createPartner({ leadTracking: true });
const statuses: Record<string, number[]> = {};
const send = async (method: string, path: string, body?: unknown, key: string | undefined = partner.apiKey) => {
  const res = await call(first.baseUrl, method, path, { key, body });
  (statuses[`${method} ${path}`] ??= []).push(res.status);
  return res;
};

await send("PUT", "/partner/v1/brokers/round-b", sample.broker());
const listing = await send("PUT", "/partner/v1/listings/round-l", sample.listing("round-b"));
await send("PUT", "/partner/v1/listings/round-l", { status: "UNDER_CONTRACT" });
const ids: Record<string, string> = {
  externalBrokerId: "round-b",
  externalListingId: "round-l",
  serviceListingId: String(listing.body.serviceListingId),
  serviceBrokerId: "1",
  officeId: String(partner.officeId),
  organizationId: String(partner.organizationId),
  name: "nothing.webp",
  file: "sitemap-1.xml",
};
// Every route, as declared: a well-formed request, one with an unknown query parameter, one with a bad body.
for (const route of first.routes) {
  if (route.method === "ALL" || route.path.includes("*")) continue;
  const path = route.path.replace(/:([A-Za-z]+)/g, (_, name: string) => encodeURIComponent(ids[name] ?? "1"));
  const body = route.method === "POST" || route.method === "PUT" ? { unexpected: true } : undefined;
  await send(
    route.method,
    path,
    route.path.includes("/leads") && route.method === "POST"
      ? { name: "Sam", email: "sam@example.com", message: "Hello" }
      : body,
  );
  await send(route.method, `${path}?unexpected=1`, body);
}
await send("GET", "/partner/v1/health", undefined, "pss_live_wrong");

const second = await startApi({ relay: false });
const after = (await call(second.baseUrl, "GET", "/partner/v1/openapi.json")).body;
const firstAgain = (await call(first.baseUrl, "GET", "/partner/v1/openapi.json")).body;
await Promise.all([first.stop(), second.stop()]);
// Written in full before exiting: a pipe takes 64 KB at a time and process.exit() drops the rest.
await Bun.write(Bun.stdout, JSON.stringify({ before, after, firstAgain, statuses }));
process.exit(0);
