// Every object schema states `additionalProperties`. A validator that finds it missing fills it in, in place, on
// the shared schema object (Elysia does, on a route's first request), which changed the OpenAPI document built
// from these schemas depending on which requests came first. Stated, nothing is left to fill in.
import { expect, test } from "bun:test";
import { Kind, type TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { Value } from "@sinclair/typebox/value";
import * as contracts from "./index.ts";

/** Every exported TypeBox schema, by export name. */
function exportedSchemas(): [string, TSchema][] {
  return Object.entries(contracts).filter(
    (e): e is [string, TSchema] => !!e[1] && typeof e[1] === "object" && Kind in e[1],
  );
}

/** Every object schema inside a schema (itself included), with where it sits. */
function objectSchemas(
  schema: unknown,
  path: string,
  found: [string, Record<string, unknown>][] = [],
  seen = new Set<unknown>(),
): [string, Record<string, unknown>][] {
  if (!schema || typeof schema !== "object" || seen.has(schema)) return found;
  seen.add(schema);
  if (Array.isArray(schema)) {
    schema.forEach((s, i) => objectSchemas(s, `${path}[${i}]`, found, seen));
    return found;
  }
  const s = schema as Record<string, unknown>;
  if (s.type === "object") found.push([path, s]);
  for (const [key, value] of Object.entries(s)) objectSchemas(value, `${path}.${key}`, found, seen);
  return found;
}

/** A comparable copy: JSON keeps every keyword a validator could add (TypeBox's own symbols never change). */
const snapshot = (schemas: [string, TSchema][]) => JSON.parse(JSON.stringify(Object.fromEntries(schemas)));

test("every object schema of the contracts states additionalProperties", () => {
  const schemas = exportedSchemas();
  expect(schemas.length).toBeGreaterThan(30);
  const objects = schemas.flatMap(([name, schema]) => objectSchemas(schema, name));
  expect(objects.length).toBeGreaterThan(40);
  const missing = objects
    .filter(([, s]) => typeof s.additionalProperties !== "boolean" && typeof s.additionalProperties !== "object")
    .map(([path]) => path);
  expect(missing).toEqual([]);
});

test("partner input and validated answers are closed; read models and events stay open to new fields", () => {
  const {
    BrokerBody,
    ListingBody,
    LeadBody,
    PageQuery,
    LeadCountQuery,
    SearchQuery,
    ErrorResponse,
    HealthResponse,
    BrokerPutResponse,
    ListingPutResponse,
    OfficeLeadCount,
    OrganizationLeadCount,
    LeadAccepted,
  } = contracts;
  for (const closed of [
    BrokerBody,
    ListingBody,
    LeadBody,
    PageQuery,
    LeadCountQuery,
    SearchQuery,
    ErrorResponse,
    HealthResponse,
    BrokerPutResponse,
    ListingPutResponse,
    OfficeLeadCount,
    OrganizationLeadCount,
    LeadAccepted,
  ]) {
    expect(closed.additionalProperties).toBe(false);
  }
  for (const open of [
    contracts.ListingRecord,
    contracts.BrokerRecord,
    contracts.PublicListing,
    contracts.PublicBroker,
    contracts.SearchResponse,
    contracts.AnyEventEnvelope,
    contracts.LeadSubmittedPayload,
  ]) {
    expect(open.additionalProperties).toBe(true);
  }
  // What open means for a tolerant reader: a field it does not know is accepted.
  expect(
    Value.Check(contracts.OrganizationLeadCount.properties.officeBreakdown.items, {
      officeId: 1,
      officeName: "Main",
      totalLeads: 0,
      region: "south",
    }),
  ).toBe(true);
});

test("compiling the schemas and validating values with them leaves every schema as it was", () => {
  contracts.registerFormats(); // as every service does before validating
  const schemas = exportedSchemas();
  const before = snapshot(schemas);
  for (const [, schema] of schemas) {
    const compiled = TypeCompiler.Compile(schema);
    for (const value of [{}, { unexpected: 1 }, null, "text", []]) {
      compiled.Check(value);
      [...compiled.Errors(value)];
      Value.Check(schema, value);
      [...Value.Errors(schema, value)];
    }
  }
  expect(snapshot(schemas)).toEqual(before);
});
