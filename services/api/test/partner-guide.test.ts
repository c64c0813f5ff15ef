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

/** The quickstart's commands, run as written in bash with this URL and key; one parsed answer per request. */
async function runQuickstart(apiKey: string): Promise<any[]> {
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
    env: { PATH: process.env.PATH, PSS_API_URL: api.baseUrl, PSS_API_KEY: apiKey },
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
  return answers;
}

/** Every field name the quickstart's answer blocks show, block by block (the JSON shown abbreviates with …). */
function shownFields(): string[][] {
  return [
    ...section(readFileSync(GUIDE, "utf8"), "2. Quickstart")
      .join("\n")
      .matchAll(/```json\n([\s\S]*?)```/g),
  ].map((b) => [...new Set([...b[1]!.matchAll(/"([A-Za-z]+)":/g)].map((m) => m[1]!))]);
}

/** Every field name anywhere in a JSON value. */
function fieldsOf(value: unknown): Set<string> {
  const names = new Set<string>();
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object")
      for (const [k, x] of Object.entries(v)) {
        names.add(k);
        walk(x);
      }
  };
  walk(value);
  return names;
}

test("the quickstart's curl commands run as written with a test key and answer what the guide shows", async () => {
  const partner = await api.createPartner({ leadTracking: true, test: true });
  const answers = await runQuickstart(partner.test!.apiKey);
  const [health, broker, listing, report, endpoint, ping, feed, archived] = answers;
  expect(health).toMatchObject({
    status: "success",
    partnerId: partner.partnerId,
    mode: "test",
    leadTracking: true,
    organizations: [{ organizationId: partner.organizationId, offices: [{ officeId: partner.officeId }] }],
  });
  // A test key's records get preview links, as the guide shows them.
  expect(broker).toMatchObject({ status: "success", message: "Broker created", qualityScore: 30 });
  expect(broker.serviceProfileUrl).toMatch(/\/preview\/brokers\/\d+\?expires=\d+&signature=/);
  expect(listing).toMatchObject({ status: "success", message: "Listing created", qualityScore: 56 });
  expect(listing.serviceListingUrl).toMatch(/\/preview\/listings\/\d+\?expires=\d+&signature=/);
  // A test listing never reaches buyers, as the guide says after the report.
  expect(report.report).toMatchObject({ externalListingId: "L-1042", state: "NOT_VISIBLE" });
  expect(report.report.reasons.map((r: { code: string }) => r.code)).toContain("TEST_MODE");
  expect(endpoint).toMatchObject({ status: "success", message: "Webhook endpoint created" });
  expect(endpoint.secret).toStartWith("whsec_");
  expect(ping).toMatchObject({ status: "success", deliveryId: expect.any(String) });
  expect(feed).toMatchObject({ status: "success", nextCursor: expect.any(String) });
  expect(archived).toMatchObject({ status: "success", message: "Listing updated" });
  // The feed as the guide shows it: the broker's creation, then the listing's, numbered from 1. Events appear
  // within about a second of their commit (as the guide says), so the quickstart's own read may come before them:
  // the feed's block is compared with the feed once it holds them.
  const deadline = Date.now() + 10_000;
  let feedAnswer = feed;
  while ((feedAnswer.results?.length ?? 0) < 2 && Date.now() < deadline) {
    await Bun.sleep(100);
    feedAnswer = (await call(api.baseUrl, "GET", "/partner/v1/events?limit=100", { key: partner.test!.apiKey })).body;
  }
  expect(feedAnswer.results.slice(0, 2).map((e: { sequence: number; type: string }) => [e.sequence, e.type])).toEqual([
    [1, "broker.created"],
    [2, "listing.created"],
  ]);
  // Every field an answer block of the guide shows is one the answer has (health, broker, listing, report, feed).
  const shown = shownFields();
  expect(shown).toHaveLength(5);
  const real = [health, broker, listing, report, feedAnswer];
  const missing = shown.flatMap((fields, i) =>
    fields.filter((f) => !fieldsOf(real[i]).has(f)).map((f) => `block ${i + 1}: ${f}`),
  );
  expect(missing).toEqual([]);
}, 60_000);

test("the quickstart runs as written with a live key without lead tracking whose oldest events the feed no longer keeps", async () => {
  const partner = await api.createPartner({ leadTracking: false });
  // A partner older than the retention: its first events are pruned, so after=0 points before what is kept.
  await partner.put("/partner/v1/brokers/B-old", { name: "Old Broker", email: "old@acme-brokers.example" });
  const numbered = async () =>
    (await call(api.baseUrl, "GET", "/partner/v1/events", { key: partner.apiKey })).body.results;
  for (const deadline = Date.now() + 10_000; (await numbered()).length < 1 && Date.now() < deadline; )
    await Bun.sleep(50);
  await api.sql`UPDATE partner_feed SET sequenced_at = now() - interval '40 days' WHERE partner_id = ${partner.partnerId}`;
  expect(await sequencer.prune()).toBeGreaterThanOrEqual(1);
  expect((await call(api.baseUrl, "GET", "/partner/v1/events?after=0", { key: partner.apiKey })).status).toBe(410);

  const [health, broker, listing, report, endpoint, ping, feed, archived] = await runQuickstart(partner.apiKey);
  expect(health).toMatchObject({ status: "success", mode: "live", leadTracking: false });
  expect(health.organizations).toBeUndefined();
  // A live key's records have public URLs.
  expect(broker.serviceProfileUrl).toMatch(/\/brokers\/\d+$/);
  expect(listing.serviceListingUrl).toMatch(/\/listings\/\d+$/);
  expect(report.report.state).toBe("PROCESSING");
  expect(endpoint).toMatchObject({ status: "success", message: "Webhook endpoint created" });
  expect(ping).toMatchObject({ status: "success" });
  // The first feed call names no after: it starts at the oldest event kept, in this key's numbering.
  expect(feed).toMatchObject({ status: "success", nextCursor: expect.any(String) });
  expect(archived).toMatchObject({ status: "success", message: "Listing updated" });
}, 60_000);

test("every phone the guide writes is accepted by the API, as its rule says", async () => {
  const guide = readFileSync(GUIDE, "utf8");
  const rule = guide.split("\n").findIndex((l) => l.includes("**phone**"));
  const text = guide
    .split("\n")
    .slice(rule, rule + 3)
    .join(" ");
  const phones = [...text.matchAll(/`([+(0-9][0-9 ().+-]*[0-9])`/g)].map((m) => m[1]!);
  expect(phones).toEqual(["+1 512 555 0100", "(512) 555-0100"]);
  const partner = await api.createPartner();
  for (const [i, phone] of phones.entries()) {
    const res = await partner.put(`/partner/v1/brokers/guide-phone-${i}`, {
      name: "Jane Broker",
      email: "jane@acme-brokers.example",
      phone,
    });
    expect([phone, res.status]).toEqual([phone, 201]);
  }
});

test("the guide's webhook table says, for every event type, what its data.version counts", () => {
  const rows = section(readFileSync(GUIDE, "utf8"), "5. Webhook events").filter((l) => /^\| `[a-z.]+` \|/.test(l));
  expect(rows.map((l) => /^\| `([a-z.]+)` \|/.exec(l)![1]).sort()).toEqual([...WEBHOOK_EVENT_TYPES, PING_EVENT].sort());
  for (const row of rows) expect(row.split("|").filter((c) => c.trim()).length).toBe(3);
});
