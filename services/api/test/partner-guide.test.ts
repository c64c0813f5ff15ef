// docs/partner-guide.md is the partner's front door: its endpoint table must name exactly the operations the API's
// OpenAPI document describes, its reference tables the fields, statuses and webhook types the contracts define, and
// its curl quickstart must run as written.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BrokerBody, LISTING_STATUSES, ListingBody, PING_EVENT, WEBHOOK_EVENT_TYPES } from "@pss/contracts";
import { createFeedSequencer, silentLogger, type FeedSequencer } from "@pss/service-kit";
import { call, startApi, type ApiHarness } from "./support/harness.ts";

const GUIDE = join(import.meta.dir, "../../../docs/partner-guide.md");
const METHODS = ["get", "put", "post", "delete", "patch"];

let api: ApiHarness;
// Numbers committed changes for the change feed, as the relay process does in production.
let sequencer: FeedSequencer;
beforeAll(async () => {
  api = await startApi({ relay: false });
  sequencer = createFeedSequencer({ sql: api.sql, logger: silentLogger }, { retentionDays: 35, idlePollMs: 20 });
  sequencer.start();
});
afterAll(async () => {
  await sequencer?.stop();
  await api?.stop();
});

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
    .flatMap(([path, ops]) =>
      Object.keys(ops).flatMap((m) => (METHODS.includes(m) ? [`${m.toUpperCase()} ${path}`] : [])),
    )
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

test("the quickstart's curl commands run as written with a test key and answer what the guide shows", async () => {
  const partner = await api.createPartner({ leadTracking: true, test: true });
  const blocks = [
    ...section(readFileSync(GUIDE, "utf8"), "2. Quickstart")
      .join("\n")
      .matchAll(/```sh\n([\s\S]*?)```/g),
  ];
  // The reader's own export line names a placeholder; the test's URL and key come from the environment instead.
  const script = blocks
    .map((b) => b[1]!)
    .join("\n")
    .split("\n")
    .filter((l) => !l.startsWith("export PSS_API_URL="))
    .join("\n");
  // One answer per line (curl prints none after the body), and a bounded time per request.
  const wrapper = 'curl() { command curl --max-time 10 "$@"; printf "\\n"; }\nset -e\n';
  const proc = Bun.spawn(["bash", "-c", wrapper + script], {
    env: { PATH: process.env.PATH, PSS_API_URL: api.baseUrl, PSS_API_KEY: partner.test!.apiKey },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  expect({ code, err }).toEqual({ code: 0, err: "" });
  const answers = out
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  expect(answers).toHaveLength(8);
  const [health, broker, listing, report, endpoint, ping, feed, archived] = answers;
  expect(health).toMatchObject({
    status: "success",
    partnerId: partner.partnerId,
    mode: "test",
    leadTracking: true,
    organizations: [{ organizationId: partner.organizationId, offices: [{ officeId: partner.officeId }] }],
  });
  expect(broker).toMatchObject({ status: "success", message: "Broker created", qualityScore: 30 });
  expect(listing).toMatchObject({ status: "success", message: "Listing created", qualityScore: 56 });
  // A test listing never reaches buyers, as the guide says after the report.
  expect(report.report).toMatchObject({ externalListingId: "L-1042", state: "NOT_VISIBLE" });
  expect(report.report.reasons.map((r: { code: string }) => r.code)).toContain("TEST_MODE");
  expect(endpoint).toMatchObject({ status: "success", message: "Webhook endpoint created" });
  expect(endpoint.secret).toStartWith("whsec_");
  expect(ping).toMatchObject({ status: "success", deliveryId: expect.any(String) });
  expect(feed).toMatchObject({ status: "success", nextCursor: expect.any(String) });
  expect(archived).toMatchObject({ status: "success", message: "Listing updated" });
  // The feed as the guide shows it: the broker's creation, then the listing's, numbered from 1.
  const deadline = Date.now() + 10_000;
  let events: { sequence: number; type: string }[] = [];
  while (Date.now() < deadline) {
    events = (await call(api.baseUrl, "GET", "/partner/v1/events?after=0", { key: partner.test!.apiKey })).body.results;
    if (events.length >= 2) break;
    await Bun.sleep(100);
  }
  expect(events.slice(0, 2).map((e) => [e.sequence, e.type])).toEqual([
    [1, "broker.created"],
    [2, "listing.created"],
  ]);
}, 60_000);
