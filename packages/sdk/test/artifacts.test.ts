// CI fails when the committed OpenAPI document differs from the one the API serves, or when the generated
// types were not regenerated from it (`npm run --silent sdk:generate` fixes both).
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { GENERATED_TYPES, OPENAPI_JSON, renderTypes, serverOpenApiDocument, staleArtifacts } from "../../../scripts/sdk-openapi.ts";

test("packages/sdk/openapi.json is the document the API serves, and src/generated/api.ts is generated from it", async () => {
  expect(await staleArtifacts()).toEqual([]);
});

test("the check notices a stale document and stale types", async () => {
  const served = (await serverOpenApiDocument()) as { paths: Record<string, unknown> };
  expect(Object.keys(served.paths)).toContain("/partner/v1/listings/{externalListingId}");
  const committed = readFileSync(OPENAPI_JSON, "utf8");
  const edited = committed.replace('"summary": "Create or update a listing"', '"summary": "Create or update a listing (edited)"');
  expect(edited).not.toBe(committed);
  expect(await renderTypes(edited)).not.toBe(readFileSync(GENERATED_TYPES, "utf8"));
});
