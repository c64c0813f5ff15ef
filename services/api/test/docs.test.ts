import { afterAll, beforeAll, expect, test } from "bun:test";
import { BrokerBody, ListingBody } from "@pss/contracts";
import { call, startApi, type ApiHarness } from "./support/harness.ts";

let api: ApiHarness;
beforeAll(async () => {
  api = await startApi({ relay: false });
});
afterAll(() => api.stop());

test("the OpenAPI 3.1 document is readable without a key and uses the very schemas that validate requests", async () => {
  const { status, body } = await call(api.baseUrl, "GET", "/partner/v1/openapi.json");
  expect(status).toBe(200);
  expect(body.openapi).toBe("3.1.0");
  const put = body.paths["/partner/v1/listings/{externalListingId}"].put;
  expect(put.requestBody.content["application/json"].schema).toEqual(JSON.parse(JSON.stringify(ListingBody)));
  expect(body.paths["/partner/v1/brokers/{externalBrokerId}"].put.requestBody.content["application/json"].schema).toEqual(JSON.parse(JSON.stringify(BrokerBody)));
  expect(Object.keys(put.responses)).toEqual(expect.arrayContaining(["200", "201", "400", "401", "404"]));
  expect(body.paths["/partner/v1/health"].get).toBeDefined();
  expect(body.paths["/partner/v1/listings"].get.parameters.map((p: any) => p.name)).toEqual(["limit", "cursor", "updatedSince"]);
  expect(body.components.securitySchemes.bearerAuth.scheme).toBe("bearer");
});

test("the /docs page is self-contained HTML describing every partner endpoint", async () => {
  const res = await fetch(`${api.baseUrl}/docs`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/html");
  const html = await res.text();
  expect(html).toContain("<title>Partner Syndication Service: API reference</title>");
  for (const path of ["/partner/v1/brokers/{externalBrokerId}", "/partner/v1/listings/{externalListingId}", "/partner/v1/health"]) expect(html).toContain(path);
  expect(html).toContain("one of DRAFT, FOR_SALE, REVIEWING_OFFERS, PENDING_CONTRACT, UNDER_CONTRACT, SOLD, ARCHIVED");
  expect(html).not.toMatch(/<script/i);
});
