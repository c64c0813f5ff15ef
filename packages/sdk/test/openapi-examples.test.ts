// Every operation of the OpenAPI document (packages/sdk/openapi.json, the document the API serves: artifacts.test.ts)
// shows a request and its answers, and every example is valid by the schema beside it, checked here with a JSON
// Schema validator as a client's tools would check it. services/api/test/status-table.test.ts sends the same
// requests to the real API.
import { expect, test } from "bun:test";
import * as ajv2020 from "ajv/dist/2020.js";
import type { Options, ValidateFunction } from "ajv/dist/2020.js";
import document from "../openapi.json" with { type: "json" };
import { isDateTime } from "../src/validation/date-time.ts";

type Json = Record<string, unknown>;
type AjvInstance = { compile(schema: object): ValidateFunction; addFormat(name: string, format: unknown): unknown };
const ajvModule = ajv2020 as unknown as { default: { default?: unknown } };
const Ajv2020 = (ajvModule.default.default ?? ajvModule.default) as new (options: Options) => AjvInstance;
const ajv = new Ajv2020({ strict: false, allErrors: true });
ajv.addFormat("date-time", { type: "string", validate: isDateTime });
ajv.addFormat("uuid", /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);

const doc = document as unknown as {
  paths: Record<string, Record<string, Json>>;
  components: Json;
};
interface Operation {
  name: string;
  op: {
    parameters?: { name: string; in: string; required: boolean; schema: Json; example?: string }[];
    requestBody?: { content: { "application/json": { schema: Json; examples?: Record<string, { value: unknown }> } } };
    responses: Record<
      string,
      { content?: { "application/json": { schema: Json; examples?: Record<string, { value: unknown }> } } }
    >;
    "x-codeSamples"?: { lang: string; label: string; source: string }[];
  };
  path: string;
  method: string;
}
const operations: Operation[] = Object.entries(doc.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, op]) => ({
    name: `${method.toUpperCase()} ${path}`,
    op: op as Operation["op"],
    path,
    method: method.toUpperCase(),
  })),
);

/** The validator's complaints about `value` under `schema` (its $refs resolved against the document's components). */
function problems(schema: Json, value: unknown): string[] {
  const validate = ajv.compile({ ...schema, components: doc.components });
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`);
}

test("the document has every operation of the API (not vacuous)", () => {
  expect(operations.length).toBeGreaterThanOrEqual(33);
});

test("every operation shows a request: a curl command, each parameter's example, and its body's", () => {
  const missing: string[] = [];
  for (const { name, op, path, method } of operations) {
    const samples = op["x-codeSamples"] ?? [];
    if (samples.length !== 1 || !samples[0]!.source.startsWith("curl ")) {
      missing.push(`${name}: no curl sample`);
      continue;
    }
    const curl = samples[0]!.source;
    // The command names the method and the path with every path parameter filled from its example.
    let filled = path;
    for (const p of op.parameters ?? []) {
      if (p.in === "path" && p.example === undefined) missing.push(`${name}: no example of path parameter ${p.name}`);
      if (p.in === "path") filled = filled.replace(`{${p.name}}`, encodeURIComponent(p.example ?? ""));
      if (p.in === "query" && p.example !== undefined && !curl.includes(`${p.name}=`))
        missing.push(`${name}: the curl sample lacks query parameter ${p.name}`);
    }
    if (!curl.includes(`"$PSS_API_URL${filled}`)) missing.push(`${name}: the curl sample does not call ${filled}`);
    if (method !== "GET" && !curl.includes(`-X ${method}`)) missing.push(`${name}: the curl sample does not ${method}`);
    const body = op.requestBody?.content["application/json"];
    if (body) {
      const examples = Object.values(body.examples ?? {});
      if (examples.length === 0) missing.push(`${name}: no request body example`);
      for (const e of examples)
        if (!curl.includes(`-d '${JSON.stringify(e.value).replace(/'/g, "'\\''")}'`))
          missing.push(`${name}: the curl sample does not send the body example`);
    }
  }
  expect(missing).toEqual([]);
});

test("every request example is valid by its schema: parameters and bodies", () => {
  const invalid: string[] = [];
  let checked = 0;
  for (const { name, op } of operations) {
    for (const p of op.parameters ?? []) {
      if (p.example === undefined) continue;
      checked++;
      for (const problem of problems(p.schema, p.example)) invalid.push(`${name} ${p.in} ${p.name}: ${problem}`);
    }
    const body = op.requestBody?.content["application/json"];
    for (const e of Object.values(body?.examples ?? {})) {
      checked++;
      for (const problem of problems(body!.schema, e.value)) invalid.push(`${name} body: ${problem}`);
    }
  }
  expect(invalid).toEqual([]);
  expect(checked).toBeGreaterThan(40);
});

test("every operation shows its success answer, and every answer example is valid by the answer's schema", () => {
  const invalid: string[] = [];
  for (const { name, op } of operations) {
    const shown = Object.entries(op.responses).flatMap(([status, r]) =>
      Object.values(r.content?.["application/json"]?.examples ?? {}).map((e) => ({ status, value: e.value })),
    );
    if (!shown.some((e) => e.status.startsWith("2"))) invalid.push(`${name}: no example of a success answer`);
    for (const { status, value } of shown)
      for (const problem of problems(op.responses[status]!.content!["application/json"].schema, value))
        invalid.push(`${name} ${status}: ${problem}`);
  }
  expect(invalid).toEqual([]);
});

test("the check refuses an example that breaks its schema", () => {
  const put = doc.paths["/partner/v1/listings/{externalListingId}"]!.put as Operation["op"];
  const body = put.requestBody!.content["application/json"];
  const example = Object.values(body.examples!)[0]!.value as Json;
  expect(problems(body.schema, example)).toEqual([]);
  expect(problems(body.schema, { ...example, status: "LIVE" })).not.toEqual([]);
  const created = put.responses["201"]!.content!["application/json"];
  expect(
    problems(created.schema, { ...(Object.values(created.examples!)[0]!.value as Json), qualityScore: "high" }),
  ).not.toEqual([]);
});
