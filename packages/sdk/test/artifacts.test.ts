// CI fails when the committed OpenAPI document differs from the one the API serves, or when the generated
// types were not regenerated from it (`npm run --silent sdk:generate` fixes both).
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { GENERATED_TYPES, OPENAPI_JSON, renderTypes, serverOpenApiDocument } from "../../../scripts/sdk-openapi.ts";

test("packages/sdk/openapi.json is the document the API serves, and src/generated/api.ts is generated from it", async () => {
  // In a process of its own: this test process has built other apps, whose schema handling can leave marks on
  // the shared TypeBox schema objects; a served document is always built by a fresh API process.
  const proc = Bun.spawn(
    [process.execPath, join(import.meta.dir, "..", "..", "..", "scripts", "sdk-openapi.ts"), "--check"],
    { stdout: "pipe", stderr: "pipe" },
  );
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  expect({ code, output: (out + err).trim() }).toMatchObject({ code: 0 });
});

test("the check notices a stale document and stale types", async () => {
  const served = (await serverOpenApiDocument()) as { paths: Record<string, unknown> };
  expect(Object.keys(served.paths)).toContain("/partner/v1/listings/{externalListingId}");
  const committed = readFileSync(OPENAPI_JSON, "utf8");
  // Any operation's summary: an edit a stale document could carry.
  const edited = committed.replace('"summary": "', '"summary": "(edited) ');
  expect(edited).not.toBe(committed);
  expect(await renderTypes(edited)).not.toBe(readFileSync(GENERATED_TYPES, "utf8"));
});
