import { afterAll, beforeAll, expect, test } from "bun:test";
import {
  BrokerBody,
  EXTERNAL_ID_PATTERN,
  HTTP_URL_PATTERN,
  ListingBody,
  MULTILINE_TEXT_PATTERN,
  SINGLE_LINE_TEXT_PATTERN,
} from "@pss/contracts";
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
  const listingSchema = put.requestBody.content["application/json"].schema;
  // Same fields and requirements as the validator's schema; the document only adds portable keywords.
  expect(Object.keys(listingSchema.properties)).toEqual(Object.keys(ListingBody.properties));
  expect(listingSchema.additionalProperties).toBe(false);
  const brokerSchema =
    body.paths["/partner/v1/brokers/{externalBrokerId}"].put.requestBody.content["application/json"].schema;
  expect(brokerSchema.required).toEqual(BrokerBody.required);
  expect(Object.keys(put.responses)).toEqual(
    expect.arrayContaining(["200", "201", "400", "401", "404", "413", "415", "429", "500", "503"]),
  );
  expect(body.paths["/partner/v1/health"].get).toBeDefined();
  expect(body.paths["/partner/v1/listings"].get.parameters.map((p: any) => p.name)).toEqual([
    "limit",
    "cursor",
    "updatedSince",
  ]);
  expect(body.components.securitySchemes.bearerAuth.scheme).toBe("bearer");
});

test("the document declares the rules the server enforces, in keywords any JSON Schema tool understands", async () => {
  const { body } = await call(api.baseUrl, "GET", "/partner/v1/openapi.json");
  const text = JSON.stringify(body);
  // Our custom formats never reach the document.
  for (const format of ["country-code", "http-url", "external-id"]) expect(text).not.toContain(`"format":"${format}"`);
  const listingPut = body.paths["/partner/v1/listings/{externalListingId}"].put;
  const schema = listingPut.requestBody.content["application/json"].schema;
  expect(schema.properties.description.anyOf[0].pattern).toBe(MULTILINE_TEXT_PATTERN);
  expect(schema.properties.businessType.pattern).toBe(SINGLE_LINE_TEXT_PATTERN);
  expect(schema.properties.location.properties.country.$ref).toBe("#/components/schemas/CountryCode");
  expect(body.components.schemas.CountryCode.enum).toContain("US");
  expect(body.components.schemas.CountryCode.enum).toHaveLength(249);
  expect(schema.properties.photos.anyOf[0].items.properties.url.pattern).toBe(HTTP_URL_PATTERN);
  expect(listingPut.parameters[0]).toMatchObject({
    name: "externalListingId",
    in: "path",
    schema: { pattern: EXTERNAL_ID_PATTERN },
  });
  const limit = body.paths["/partner/v1/listings"].get.parameters.find((p: any) => p.name === "limit");
  for (const ok of ["1", "500", "007"]) expect(new RegExp(limit.schema.pattern, "u").test(ok)).toBe(true);
  for (const bad of ["0", "501", "", "1.5", "-1"]) expect(new RegExp(limit.schema.pattern, "u").test(bad)).toBe(false);
  const sort = body.paths["/v1/listings"].get.parameters.find((p: any) => p.name === "sort");
  expect(new RegExp(sort.schema.pattern, "u").test("price_asc")).toBe(true);
  expect(new RegExp(sort.schema.pattern, "u").test("popular")).toBe(false);
  const office = body.paths["/partner/v1/offices/{officeId}/leads/count"].get;
  expect(new RegExp(office.parameters[0].schema.pattern, "u").test("2147483648")).toBe(false);
  expect(office.responses["429"].headers["Retry-After"]).toEqual({ $ref: "#/components/headers/RetryAfter" });
  expect(body.components.headers.RetryAfter.required).toBe(true);
  expect(office.responses["404"].content["application/json"].schema).toEqual({
    $ref: "#/components/schemas/ErrorResponse",
  });
  // The avatar URL: "" is refused by the server, and by the document.
  const avatar =
    body.paths["/partner/v1/brokers/{externalBrokerId}"].put.requestBody.content["application/json"].schema.properties
      .avatarUrl.anyOf[0];
  expect(new RegExp(avatar.pattern, "u").test("")).toBe(false);
  const refused = await call(api.baseUrl, "PUT", "/partner/v1/brokers/doc-avatar", {
    key: (await api.createPartner()).apiKey,
    body: { name: "A", email: "a@example.com", avatarUrl: "" },
  });
  expect(refused.status).toBe(400);
});

test("the /docs page is self-contained HTML describing every partner endpoint", async () => {
  const res = await fetch(`${api.baseUrl}/docs`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/html");
  const html = await res.text();
  expect(html).toContain("<title>Partner Syndication Service: API reference</title>");
  for (const path of [
    "/partner/v1/brokers/{externalBrokerId}",
    "/partner/v1/listings/{externalListingId}",
    "/partner/v1/health",
  ])
    expect(html).toContain(path);
  expect(html).toContain("one of DRAFT, FOR_SALE, REVIEWING_OFFERS, PENDING_CONTRACT, UNDER_CONTRACT, SOLD, ARCHIVED");
  expect(html).not.toMatch(/<script/i);
});

test("the /docs page shows every operation's example request and example answers", async () => {
  const html = await (await fetch(`${api.baseUrl}/docs`)).text();
  const { body } = await call(api.baseUrl, "GET", "/partner/v1/openapi.json");
  const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const missing: string[] = [];
  let shown = 0;
  for (const [path, methods] of Object.entries<Record<string, any>>(body.paths)) {
    for (const [method, op] of Object.entries<any>(methods)) {
      const curl = op["x-codeSamples"]?.[0]?.source;
      if (!curl || !html.includes(escape(curl))) missing.push(`${method} ${path}: request`);
      for (const [status, response] of Object.entries<any>(op.responses)) {
        for (const example of Object.values<any>(response.content?.["application/json"]?.examples ?? {})) {
          shown++;
          if (!html.includes(escape(JSON.stringify(example.value, null, 2))))
            missing.push(`${method} ${path}: ${status}`);
        }
      }
    }
  }
  expect(missing).toEqual([]);
  expect(shown).toBeGreaterThan(33);
});

test("stored date-times are limited to years 1000-9998, in the document and in the server", async () => {
  const { body } = await call(api.baseUrl, "GET", "/partner/v1/openapi.json");
  const schema =
    body.paths["/partner/v1/listings/{externalListingId}"].put.requestBody.content["application/json"].schema;
  const pattern = new RegExp(schema.properties.establishedAt.anyOf[0].pattern, "u");
  for (const ok of ["1000-01-01T00:00:00Z", "2024-05-01T12:00:00Z", "9998-12-31T23:59:59-14:00"])
    expect(pattern.test(ok)).toBe(true);
  for (const bad of ["0018-11-09T20:00:13Z", "0999-12-31T00:00:00Z", "9999-12-31T23:59:59-14:00"])
    expect(pattern.test(bad)).toBe(false);
  const partner = await api.createPartner();
  for (const bad of ["0018-11-09T20:00:13.7-05:29", "9999-12-31T23:59:59-14:00"]) {
    const res = await call(api.baseUrl, "PUT", "/partner/v1/listings/doc-established", {
      key: partner.apiKey,
      body: { establishedAt: bad },
    });
    expect([res.status, res.body.error]).toEqual([400, expect.stringContaining("establishedAt")]);
  }
});

test("text lengths count characters as the document does: 200 emoji make a valid title, 201 do not", async () => {
  const partner = await api.createPartner();
  const broker = await call(api.baseUrl, "PUT", "/partner/v1/brokers/doc-emoji", {
    key: partner.apiKey,
    body: { name: "\u{1F600}".repeat(200), email: "e@example.com" },
  });
  expect(broker.status).toBe(201);
  const tooLong = await call(api.baseUrl, "PUT", "/partner/v1/brokers/doc-emoji", {
    key: partner.apiKey,
    body: { name: "\u{1F600}".repeat(201), email: "e@example.com" },
  });
  expect([tooLong.status, tooLong.body.error]).toEqual([400, "name: must be at most 200 characters"]);
  const empty = await call(api.baseUrl, "PUT", "/partner/v1/brokers/doc-emoji", {
    key: partner.apiKey,
    body: { name: "", email: "e@example.com" },
  });
  expect([empty.status, empty.body.error]).toEqual([400, "name: must not be empty"]);
  const { body } = await call(api.baseUrl, "GET", "/partner/v1/openapi.json");
  const name =
    body.paths["/partner/v1/brokers/{externalBrokerId}"].put.requestBody.content["application/json"].schema.properties
      .name;
  expect(name).toMatchObject({ type: "string", minLength: 1, maxLength: 200 });
});

test("the document's webhooks section describes every event sent to partners' endpoints, with the Standard Webhooks headers", async () => {
  const { body } = await call(api.baseUrl, "GET", "/partner/v1/openapi.json");
  expect(Object.keys(body.webhooks).sort()).toEqual([
    "broker.avatar.processed",
    "lead.received",
    "listing.media.processed",
    "listing.published",
    "listing.report.changed",
    "listing.unpublished",
    "ping",
  ]);
  for (const [type, item] of Object.entries<any>(body.webhooks)) {
    expect(item.post.parameters.map((p: any) => [p.in, p.name, p.required])).toEqual([
      ["header", "webhook-id", true],
      ["header", "webhook-timestamp", true],
      ["header", "webhook-signature", true],
    ]);
    const schema = item.post.requestBody.content["application/json"].schema;
    expect(schema.properties.type).toEqual({ const: type });
    expect(schema.properties.data.required).toContain("version");
    expect(Object.keys(item.post.responses).sort()).toEqual(["2XX", "410", "default"]);
  }
  // lead.received never names the buyer.
  expect(
    Object.keys(
      body.webhooks["lead.received"].post.requestBody.content["application/json"].schema.properties.data.properties,
    ).sort(),
  ).toEqual([
    "externalBrokerId",
    "externalListingId",
    "officeId",
    "officeLeadCount",
    "sequence",
    "serviceBrokerId",
    "serviceListingId",
    "serviceListingUrl",
    "serviceProfileUrl",
    "version",
  ]);
  for (const path of [
    "/partner/v1/webhook-endpoints/{endpointId}",
    "/partner/v1/webhook-endpoints/{endpointId}/recover",
    "/partner/v1/webhook-endpoints/{endpointId}/replay",
    "/partner/v1/events",
    "/partner/v1/webhook-deliveries",
  ])
    expect(body.paths[path]).toBeDefined();
  expect(
    body.paths["/partner/v1/webhook-endpoints/{endpointId}/recover"].post.parameters.map((p: any) => [
      p.in,
      p.name,
      p.required,
    ]),
  ).toEqual([
    ["path", "endpointId", true],
    ["query", "since", true],
    ["header", "Idempotency-Key", false],
  ]);
});
