// docs/partner-guide.md is the partner's front door: its endpoint table must name exactly the operations the API's
// OpenAPI document describes, and its reference tables the fields, statuses and webhook types the contracts define.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BrokerBody, LISTING_STATUSES, ListingBody, PING_EVENT, WEBHOOK_EVENT_TYPES } from "@pss/contracts";
import { call, startApi, type ApiHarness } from "./support/harness.ts";

const GUIDE = join(import.meta.dir, "../../../docs/partner-guide.md");
const METHODS = ["get", "put", "post", "delete", "patch"];

let api: ApiHarness;
beforeAll(async () => {
  api = await startApi({ relay: false });
});
afterAll(() => api.stop());

/** The lines of one `## ` section of the guide, found by the start of its heading. */
function section(guide: string, heading: string): string[] {
  const lines = guide.split("\n");
  const start = lines.findIndex((l) => l.startsWith(`## ${heading}`));
  if (start < 0) throw new Error(`docs/partner-guide.md has no section "## ${heading}…"`);
  const end = lines.findIndex((l, i) => i > start && l.startsWith("## "));
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

/** First cells of table rows, as `METHOD path` for the endpoint tables. */
function tableOperations(lines: string[]): string[] {
  return lines.flatMap((l) => {
    const m = /^\| (GET|PUT|POST|DELETE|PATCH) \| `([^`]+)` \|/.exec(l);
    return m ? [`${m[1]} ${m[2]}`] : [];
  });
}

/** The backquoted first cells of the rows of the first table in `lines` (field names, statuses, event types). */
function firstCells(lines: string[]): string[] {
  const start = lines.findIndex((l) => l.startsWith("|"));
  const end = lines.findIndex((l, i) => i > start && !l.startsWith("|"));
  return lines.slice(start, end < 0 ? undefined : end).flatMap((l) => {
    const m = /^\| `([^`]+)` \|/.exec(l);
    return m ? [m[1]!] : [];
  });
}

/** The lines from a `### ` heading (by its start) to the next heading of any level. */
function subsection(lines: string[], heading: string): string[] {
  const start = lines.findIndex((l) => l.startsWith(`### ${heading}`));
  if (start < 0) throw new Error(`docs/partner-guide.md has no "### ${heading}…"`);
  const end = lines.findIndex((l, i) => i > start && /^#{2,3} /.test(l));
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

test("the guide's endpoint tables name every operation of the OpenAPI document, and none it does not have", async () => {
  const { status, body } = await call(api.baseUrl, "GET", "/partner/v1/openapi.json");
  expect(status).toBe(200);
  const documented = Object.entries(body.paths as Record<string, Record<string, unknown>>)
    .flatMap(([path, ops]) => Object.keys(ops).flatMap((m) => (METHODS.includes(m) ? [`${m.toUpperCase()} ${path}`] : [])))
    .sort();
  const table = tableOperations(section(readFileSync(GUIDE, "utf8"), "4. Endpoints"));
  // Each operation once: a repeated row would hide a missing one.
  expect(table.filter((op, i) => table.indexOf(op) !== i)).toEqual([]);
  const inTable = new Set(table);
  const inDocument = new Set(documented);
  expect({
    missingFromGuide: documented.filter((op) => !inTable.has(op)),
    notInApi: table.filter((op) => !inDocument.has(op)).sort(),
  }).toEqual({ missingFromGuide: [], notInApi: [] });
  // Not vacuous: the partner API and the buyer routes are both there.
  expect(inTable.has("GET /partner/v1/health")).toBe(true);
  expect(inTable.has("POST /v1/listings/{serviceListingId}/leads")).toBe(true);
});

test("the guide's field reference lists every Broker and Listing body field, its statuses and its webhook types", () => {
  const guide = readFileSync(GUIDE, "utf8");
  const fields = section(guide, "3. Field reference");
  expect(firstCells(subsection(fields, "Broker")).sort()).toEqual(Object.keys(BrokerBody.properties).sort());
  const listing = firstCells(subsection(fields, "Listing: "));
  // property.rentData has a row of its own.
  expect(listing.filter((f) => !f.includes(".")).sort()).toEqual(Object.keys(ListingBody.properties).sort());
  expect(firstCells(subsection(fields, "Listing statuses"))).toEqual([...LISTING_STATUSES]);
  expect(firstCells(section(guide, "5. Webhook events")).sort()).toEqual([...WEBHOOK_EVENT_TYPES, PING_EVENT].sort());
});
