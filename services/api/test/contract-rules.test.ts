// Keeps the contract test honest (contract/rules-beyond-schema.json): the schema-valid requests the API refuses are
// exactly the listed rules beyond the schema, each stated in its operation's document and each refused with 400
// (details naming the field when the rule spans fields); everything a schema can carry is in the schema. Found by
// a schema-based fuzzer: an empty cursor, startDate after endDate, a photo URL twice, a new webhook endpoint
// without url/events were refused while the document declared them valid.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { servedByPartnerApi } from "@pss/contracts";
import { uniqueName } from "../../../test/support/env.ts";
import { call, startApi, type ApiHarness, type Partner } from "./support/harness.ts";

interface Rule {
  rule: string;
  operations: string[];
  stated: string;
  violation: { query?: Record<string, string>; body?: unknown };
  detailPath: string | null;
}
const RULES: Rule[] = JSON.parse(
  readFileSync(join(import.meta.dir, "contract", "rules-beyond-schema.json"), "utf8"),
).rules;

let api: ApiHarness;
let partner: Partner;
let doc: any;

beforeAll(async () => {
  api = await startApi({ relay: false });
  partner = await api.createPartner({ leadTracking: true });
  expect(
    (
      await partner.put("/partner/v1/brokers/contract-broker", {
        name: "Contract Broker",
        email: "contract.broker@example.com",
      })
    ).status,
  ).toBe(201);
  doc = (await call(api.baseUrl, "GET", "/partner/v1/openapi.json")).body;
});
afterAll(async () => {
  await api.sql`DELETE FROM webhook_endpoints WHERE partner_id = ${partner.partnerId}`;
  await api.stop();
});

/** Where a path is served: the partner API, or the marketplace for the public routes its document also shows. */
const baseOf = (path: string) => (servedByPartnerApi(path) ? api.baseUrl : api.marketplaceUrl);

const operationOf = (op: string) => {
  const [method, path] = op.split(" ") as [string, string];
  return doc.paths[path]?.[method.toLowerCase()];
};

/** A concrete path of the operation: the partner's own office and organization, existing brokers and listings, new IDs elsewhere. */
function concrete(path: string): string {
  return path
    .replace("{officeId}", String(partner.officeId))
    .replace("{organizationId}", String(partner.organizationId))
    .replace("{externalBrokerId}", "contract-broker")
    .replace("{externalListingId}", uniqueName("listing"))
    .replace("{endpointId}", uniqueName("endpoint"));
}

describe("every rule beyond the schema", () => {
  for (const r of RULES) {
    for (const op of r.operations) {
      test(`${r.rule}: ${op} states it and refuses a request that breaks it with 400`, async () => {
        const operation = operationOf(op);
        expect(operation).toBeDefined();
        const text = [
          operation.description ?? "",
          ...(operation.parameters ?? []).map((p: any) => p.schema?.description ?? ""),
        ].join("\n");
        expect(text).toContain(r.stated);
        if (r.detailPath) expect(operation.responses["400"].description).toContain("details");

        const [method, path] = op.split(" ") as [string, string];
        const query = r.violation.query ? `?${new URLSearchParams(r.violation.query)}` : "";
        const res = await call(baseOf(path), method, `${concrete(path)}${query}`, {
          key: partner.apiKey,
          body: r.violation.body,
        });
        expect(res.status).toBe(400);
        expect(res.body.status).toBe("error");
        if (r.detailPath) expect(res.body.details?.map((d: { path: string }) => d.path)).toContain(r.detailPath);
      });
    }
  }
});

describe("what a schema can carry is in the schema", () => {
  const cursorOperations = () =>
    Object.entries(doc.paths).flatMap(([path, ops]: [string, any]) =>
      Object.entries(ops)
        .filter(([, op]: [string, any]) => (op.parameters ?? []).some((p: any) => p.name === "cursor"))
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );

  test("every cursor parameter is declared non-empty base64url, and the cursor rule lists every operation that has one", () => {
    const ops = cursorOperations();
    expect(ops.length).toBeGreaterThan(0);
    for (const op of ops) {
      const cursor = operationOf(op).parameters.find((p: any) => p.name === "cursor");
      expect({ op, minLength: cursor.schema.minLength, pattern: cursor.schema.pattern }).toEqual({
        op,
        minLength: 1,
        pattern: "^[A-Za-z0-9_-]+$",
      });
    }
    expect(RULES.find((r) => r.rule === "cursor-as-handed-out")!.operations.sort()).toEqual(ops.sort());
  });

  test("an empty or blank cursor, which the document now declares invalid, is refused on every list", async () => {
    for (const op of cursorOperations()) {
      const path = concrete(op.split(" ")[1]!);
      for (const cursor of ["", " ", "AAAA="]) {
        const res = await call(baseOf(path), "GET", `${path}?cursor=${encodeURIComponent(cursor)}`, {
          key: partner.apiKey,
        });
        expect({ op, cursor, status: res.status }).toEqual({ op, cursor, status: 400 });
      }
    }
  });

  test("what the fuzzer sent, made valid by the rules' own fixes, is accepted", async () => {
    const office = `/partner/v1/offices/${partner.officeId}/leads/count`;
    expect(
      (
        await call(
          api.baseUrl,
          "GET",
          `${office}?startDate=${encodeURIComponent("0556-01-28T04:04:07-14:11")}&endDate=${encodeURIComponent("9919-08-13T00:29:25.3-14:35")}`,
          { key: partner.apiKey },
        )
      ).status,
    ).toBe(200);
    const endpoint = uniqueName("endpoint");
    expect(
      (
        await call(api.baseUrl, "PUT", `/partner/v1/webhook-endpoints/${endpoint}`, {
          key: partner.apiKey,
          body: { url: "https://hooks.example.com/pss", events: ["listing.published"] },
        })
      ).status,
    ).toBe(201);
    // Once it exists, the same empty body is an update that changes nothing.
    expect(
      (await call(api.baseUrl, "PUT", `/partner/v1/webhook-endpoints/${endpoint}`, { key: partner.apiKey, body: {} }))
        .status,
    ).toBe(200);
  });
});
