// pss-sync against the real stack: the API as its own process (real PostgreSQL and Redis), the CLI as its
// own process, exactly as a partner runs them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { partnerFixture, startApiProcess, waitFor, type ApiProcess } from "./support/api-process.ts";
import { readNdjson, spawnCli } from "./support/cli-process.ts";
import { feedLines, writeFeed } from "./support/feeds.ts";

let api: ApiProcess;
let fx: Awaited<ReturnType<typeof partnerFixture>>;
let dir: string;

beforeAll(async () => {
  api = await startApiProcess();
  fx = await partnerFixture();
  dir = mkdtempSync(join(tmpdir(), "pss-sync-it-"));
});
afterAll(async () => {
  await api?.stop();
  await fx?.close();
  rmSync(dir, { recursive: true, force: true });
});

const puts = (from = 0) =>
  api
    .requests()
    .slice(from)
    .filter((r) => r.method === "PUT");
const count = (rows: Record<string, any>[], outcome: string) => rows.filter((r) => r.outcome === outcome).length;

async function stored(partnerId: string) {
  const [row] = await fx.sql`
    SELECT (SELECT count(*)::int FROM listings WHERE partner_id = ${partnerId}) AS listings,
           (SELECT count(*)::int FROM brokers WHERE partner_id = ${partnerId}) AS brokers,
           (SELECT count(*)::int FROM listings WHERE partner_id = ${partnerId} AND version <> 1) AS "listingsWrittenTwice",
           (SELECT count(*)::int FROM outbox WHERE payload->>'partnerId' = ${partnerId} AND payload->>'type' = 'listing.upserted') AS "listingEvents"`;
  return row!;
}

test("a 2,000-record feed syncs, and a re-run with --resume sends nothing", async () => {
  const partner = await fx.createPartner();
  const env = { PSS_API_URL: api.url, PSS_API_KEY: partner.apiKey };
  const feed = writeFeed(join(dir, "full.ndjson"), feedLines("full", { brokers: 50, listings: 1950 }));
  const report = join(dir, "full-report.ndjson");

  const before = api.requests().length;
  const first = await spawnCli([feed, "--rpm", "0", "--concurrency", "8", "--report", report], env).finished();
  expect(first.code).toBe(0);
  expect(first.summary).toMatchObject({ total: 2000, created: 2000, failed: 0 });
  const lines = readNdjson(report);
  expect(lines).toHaveLength(2000);
  expect(count(lines, "created")).toBe(2000);
  expect(lines.find((l) => l.id === "full-l7")).toEqual({
    kind: "listing",
    id: "full-l7",
    outcome: "created",
    httpStatus: 201,
    serviceId: expect.any(Number),
    url: expect.stringMatching(/\/listings\/\d+$/),
    error: null,
    qualityScore: expect.any(Number),
    ...(lines.find((l) => l.id === "full-l7")!.warnings ? { warnings: expect.any(Array) } : {}),
  });
  expect(await stored(partner.partnerId)).toMatchObject({ listings: 1950, brokers: 50, listingsWrittenTwice: 0 });
  // Batches of 100 (the default): one for the 50 brokers, 20 for the listings, no single PUT; every broker
  // reached the API before the first listing.
  const batches = api
    .requests()
    .slice(before)
    .filter((r) => r.method === "POST" && r.path.endsWith("/batch"));
  expect(puts(before)).toHaveLength(0);
  expect(batches.map((r) => r.path.split("/")[3])).toEqual(["brokers", ...Array(20).fill("listings")]);

  const beforeRerun = api.requests().length;
  const again = await spawnCli([feed, "--resume", "--rpm", "0", "--report", report], env).finished();
  expect(again.code).toBe(0);
  expect(again.summary).toMatchObject({ total: 2000, skipped: 2000, created: 0, updated: 0, failed: 0 });
  expect(count(readNdjson(report), "skipped")).toBe(2000);
  // Only the start-up checks reached the API: the health check, and its document (does it offer batches).
  expect(
    api
      .requests()
      .slice(beforeRerun)
      .map((r) => `${r.method} ${r.path}`),
  ).toEqual(["GET /partner/v1/health", "GET /partner/v1/openapi.json"]);
}, 180_000);

test("--batch-size 1 sends one PUT per record", async () => {
  const partner = await fx.createPartner();
  const env = { PSS_API_URL: api.url, PSS_API_KEY: partner.apiKey };
  const feed = writeFeed(join(dir, "single.ndjson"), feedLines("single", { brokers: 2, listings: 30 }));
  const before = api.requests().length;
  const result = await spawnCli([feed, "--rpm", "0", "--batch-size", "1"], env).finished();
  expect(result.summary).toMatchObject({ total: 32, created: 32, failed: 0 });
  expect(puts(before)).toHaveLength(32);
  expect(
    api
      .requests()
      .slice(before)
      .filter((r) => r.method === "POST"),
  ).toHaveLength(0);
});

test("a run killed midway (SIGKILL) resumes without writing any record twice", async () => {
  const partner = await fx.createPartner();
  const env = { PSS_API_URL: api.url, PSS_API_KEY: partner.apiKey };
  const feed = writeFeed(join(dir, "killed.ndjson"), feedLines("killed", { brokers: 5, listings: 1000 }));

  // 12,000 requests a minute: about 5 s for the feed, so the kill lands midway on a fast machine too.
  const run = spawnCli([feed, "--rpm", "12000", "--concurrency", "8"], env);
  await run.progress((e) => e.phase === "listings" && e.done >= 250);
  run.proc.kill("SIGKILL");
  expect(await run.proc.exited).not.toBe(0);
  const atKill = await stored(partner.partnerId);
  expect(atKill.listings).toBeGreaterThan(0);
  expect(atKill.listings).toBeLessThan(1000);

  const report = join(dir, "resumed-report.ndjson");
  const resumed = await spawnCli([feed, "--resume", "--rpm", "0", "--report", report], env).finished();
  expect(resumed.code).toBe(0);
  const lines = readNdjson(report);
  expect(lines).toHaveLength(1005);
  expect(count(lines, "failed")).toBe(0);
  // What the checkpoint had is skipped; what was in flight at the kill is sent again and is a no-op.
  expect(count(lines, "skipped")).toBeGreaterThan(0);
  expect(count(lines, "skipped") + count(lines, "created") + count(lines, "updated") + count(lines, "unchanged")).toBe(
    1005,
  );
  expect(await stored(partner.partnerId)).toEqual({
    listings: 1000,
    brokers: 5,
    listingsWrittenTwice: 0,
    listingEvents: 1000,
  });
});

test("a bad record is reported with its field path, and the rest go through", async () => {
  const partner = await fx.createPartner();
  const env = { PSS_API_URL: api.url, PSS_API_KEY: partner.apiKey };
  const good = feedLines("bad", { brokers: 1, listings: 20 });
  const [template] = good;
  const feed = writeFeed(join(dir, "bad.ndjson"), [
    ...good,
    { kind: "listing", id: "bad-price", body: { ...template!.body, financials: { askingPrice: "cheap" } } },
    { kind: "listing", id: "bad-field", body: { ...template!.body, colour: "red" } },
    // Valid for the schema; refused by the API: the broker does not exist.
    { kind: "listing", id: "bad-broker", body: { ...template!.body, brokerExternalId: "nobody" } },
  ]);
  appendFileSync(feed, '{"kind":"listing","id":"bad-json",\n');
  const report = join(dir, "bad-report.ndjson");
  const result = await spawnCli([feed, "--rpm", "0", "--report", report], env).finished();
  expect(result.code).toBe(1);
  expect(result.summary).toMatchObject({ created: 21, failed: 4 });
  const byId = Object.fromEntries(readNdjson(report).map((l) => [l.id, l]));
  expect(byId["bad-price"]).toMatchObject({
    outcome: "failed",
    httpStatus: null,
    error: expect.stringContaining("financials.askingPrice: must be a number"),
  });
  expect(byId["bad-field"]).toMatchObject({
    outcome: "failed",
    error: expect.stringContaining("colour: is not a known field"),
  });
  expect(byId["bad-broker"]).toMatchObject({
    outcome: "failed",
    httpStatus: 404,
    error: expect.stringContaining("Broker not found"),
  });
  expect(readNdjson(report).find((l) => l.id === null)).toMatchObject({
    outcome: "failed",
    error: "line 25: not valid JSON",
  });
  expect(await stored(partner.partnerId)).toMatchObject({ listings: 20, brokers: 1 });
  expect(result.summary!.firstFailures.map((f: { id: string | null }) => f.id)).toEqual(
    expect.arrayContaining(["bad-price", "bad-field", "bad-broker"]),
  );
});

test("a CSV feed syncs with its cells typed by the schema", async () => {
  const partner = await fx.createPartner();
  const env = { PSS_API_URL: api.url, PSS_API_KEY: partner.apiKey };
  const csv = [
    "kind,id,name,email,brokerExternalId,status,businessType,location.city,location.state,location.country,location.visibility,financials.askingPrice,financing.financingAvailable,photos",
    "broker,csv-b1,Jane Broker,jane@example.com,,,,,,,,,,",
    'listing,csv-l1,,,csv-b1,FOR_SALE,Restaurant,Austin,TX,US,SHOW_CITY_STATE,450000,true,"[{""url"":""https://images.example.com/a.jpg"",""sortKey"":1}]"',
    "listing,csv-l2,,,csv-b1,FOR_SALE,Retail,Austin,TX,US,SHOW_CITY_STATE,cheap,,",
  ].join("\n");
  const feed = join(dir, "feed.csv");
  writeFileSync(feed, csv);
  const report = join(dir, "csv-report.ndjson");
  const result = await spawnCli([feed, "--rpm", "0", "--report", report], env).finished();
  expect(result.code).toBe(1);
  const byId = Object.fromEntries(readNdjson(report).map((l) => [l.id, l]));
  expect(byId["csv-l1"].outcome).toBe("created");
  expect(byId["csv-l2"]).toMatchObject({
    outcome: "failed",
    error: "line 4: financials.askingPrice: must be a number",
  });
  const back = (await fetch(`${api.url}/partner/v1/listings/csv-l1`, {
    headers: { authorization: `Bearer ${partner.apiKey}` },
  }).then((r) => r.json())) as { listing: unknown };
  expect(back.listing).toMatchObject({
    financials: { askingPrice: 450000 },
    financing: { financingAvailable: true },
    photos: [expect.objectContaining({ url: "https://images.example.com/a.jpg", sortKey: 1 })],
  });
});

describe("an API restart mid-run", () => {
  test("the run retries through it and every record is stored once", async () => {
    const partner = await fx.createPartner();
    const env = { PSS_API_URL: api.url, PSS_API_KEY: partner.apiKey };
    const feed = writeFeed(join(dir, "restart.ndjson"), feedLines("restart", { brokers: 2, listings: 600 }));
    const report = join(dir, "restart-report.ndjson");
    // Batches of 20: 30 listing batches, so many are still to be sent when the API goes down.
    const run = spawnCli([feed, "--rpm", "12000", "--concurrency", "8", "--batch-size", "20", "--report", report], env);
    await run.progress((e) => e.phase === "listings" && e.done >= 150);
    await api.kill();
    // Down long enough for the CLI to meet refused connections, then back on the same address.
    const downSince = Date.now();
    await waitFor("a failed attempt", () => Date.now() - downSince > 1500);
    await api.restart();
    const result = await run.finished();
    expect(result.code).toBe(0);
    const lines = readNdjson(report);
    expect(lines).toHaveLength(602);
    expect(count(lines, "failed")).toBe(0);
    // Attempts were refused while the API was down and sent again: more requests than the health check and 31 batches.
    expect(result.summary!.requests).toBeGreaterThan(32);
    // A PUT that was committed when the API died is answered 200 when sent again: created or updated, never twice.
    expect(count(lines, "created") + count(lines, "updated")).toBe(602);
    expect(await stored(partner.partnerId)).toEqual({
      listings: 600,
      brokers: 2,
      listingsWrittenTwice: 0,
      listingEvents: 600,
    });
  });
});

test("--dry-run of a new feed, then of a changed one, says what the real sync then does, and stores nothing", async () => {
  const partner = await fx.createPartner();
  const env = { PSS_API_URL: api.url, PSS_API_KEY: partner.apiKey };
  const lines = feedLines("dry", { brokers: 3, listings: 20 });
  const feed = writeFeed(join(dir, "dry.ndjson"), lines);
  const dryReport = join(dir, "dry-report.ndjson");
  const realReport = join(dir, "dry-real-report.ndjson");
  const outcomes = (path: string) => Object.fromEntries(readNdjson(path).map((l) => [`${l.kind}:${l.id}`, l.outcome]));

  // New brokers and the listings naming them: a dry run stores no broker, yet the listings are checked as the
  // real sync will send them (after their brokers), not refused with "Broker not found".
  const dry = await spawnCli([feed, "--dry-run", "--rpm", "0", "--report", dryReport], env).finished();
  expect(dry.code).toBe(0);
  expect(dry.summary).toMatchObject({ total: 23, created: 23, failed: 0, dryRun: true });
  expect(await stored(partner.partnerId)).toMatchObject({ listings: 0, brokers: 0, listingEvents: 0 });
  const created = readNdjson(dryReport).find((l) => l.id === "dry-l4")!;
  expect(created.changedPaths).toEqual(
    expect.arrayContaining(["brokerExternalId", "financials.askingPrice", "photos", "title"]),
  );
  expect(created.changedPaths.some((p: string) => p.startsWith("broker."))).toBe(false);

  const real = await spawnCli([feed, "--rpm", "0", "--report", realReport], env).finished();
  expect(real.summary).toMatchObject({ total: 23, created: 23, failed: 0 });
  expect(outcomes(realReport)).toEqual(outcomes(dryReport));

  // One asking price and one broker's phone changed; a bad status: the dry run names exactly those.
  const changed = lines.map((l) =>
    l.id === "dry-l7"
      ? { ...l, body: { ...l.body, financials: { ...(l.body.financials as object), askingPrice: 123_456 } } }
      : l.id === "dry-b1"
        ? { ...l, body: { ...l.body, phone: "+1 512 555 0199" } }
        : l.id === "dry-l9"
          ? { ...l, body: { ...l.body, status: "SOLD_OUT" } }
          : l,
  );
  writeFeed(feed, changed);
  const dryAgain = await spawnCli([feed, "--dry-run", "--rpm", "0", "--report", dryReport], env).finished();
  expect(dryAgain.code).not.toBe(0);
  expect(dryAgain.summary).toMatchObject({ total: 23, updated: 2, unchanged: 20, failed: 1 });
  const byId = Object.fromEntries(readNdjson(dryReport).map((l) => [l.id, l]));
  expect(byId["dry-l7"]).toMatchObject({ outcome: "updated", changedPaths: ["financials.askingPrice"] });
  expect(byId["dry-b1"]).toMatchObject({ outcome: "updated", changedPaths: ["phone"] });
  expect(byId["dry-l9"]).toMatchObject({ outcome: "failed", error: expect.stringContaining("status") });
  const writesBefore =
    await fx.sql`SELECT max(version)::int AS v FROM listings WHERE partner_id = ${partner.partnerId}`;
  expect(writesBefore[0]!.v).toBe(1);

  const realAgain = await spawnCli([feed, "--rpm", "0", "--report", realReport], env).finished();
  expect(realAgain.summary).toMatchObject({ total: 23, failed: 1 });
  // The real sync has no checkpoint here (no --resume): what it calls "updated" includes identical repeats; the
  // stored versions show what really changed: exactly the listing the dry run named.
  const versions =
    await fx.sql`SELECT external_id, version FROM listings WHERE partner_id = ${partner.partnerId} AND version > 1`;
  expect(versions.map((r) => r.external_id)).toEqual(["dry-l7"]);
  const [broker] =
    await fx.sql`SELECT version FROM brokers WHERE partner_id = ${partner.partnerId} AND external_id = 'dry-b1'`;
  expect(broker!.version).toBe(2);
}, 120_000);

describe("quality warnings and the report command (issue 24)", () => {
  /** pss-sync report as a user runs it; what it prints on stdout. */
  async function reportCommand(args: string[], env: Record<string, string>) {
    const proc = Bun.spawn([process.execPath, join(import.meta.dir, "..", "src/cli/main.ts"), "report", ...args], {
      env: { ...process.env, ...env },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    return { stdout, stderr, code };
  }

  test("the summary counts the listings and brokers carrying each warning; each report line carries its record's", async () => {
    const partner = await fx.createPartner();
    const env = { PSS_API_URL: api.url, PSS_API_KEY: partner.apiKey };
    const records = feedLines("warn", { brokers: 2, listings: 6 });
    // Two listings without an asking price, one broker without a phone.
    for (const r of records) {
      if (r.id === "warn-l1" || r.id === "warn-l4")
        (r.body.financials as Record<string, unknown>).askingPrice = undefined;
      if (r.id === "warn-b1") delete r.body.phone;
    }
    const feed = writeFeed(join(dir, "warn.ndjson"), records);
    const report = join(dir, "warn-report.ndjson");
    const run = await spawnCli([feed, "--rpm", "0", "--report", report], env).finished();
    expect(run.code).toBe(0);
    const lines = readNdjson(report);
    const tally = (kind: string) => {
      const out: Record<string, number> = {};
      for (const l of lines.filter((x) => x.kind === kind))
        for (const code of new Set((l.warnings ?? []).map((w: { code: string }) => w.code)))
          out[code as string] = (out[code as string] ?? 0) + 1;
      return out;
    };
    expect(run.summary!.warnings).toEqual({ listings: tally("listing"), brokers: tally("broker") });
    expect(run.summary!.warnings.listings.ASKING_PRICE_MISSING).toBe(2);
    expect(run.summary!.warnings.brokers.BROKER_PHONE_MISSING).toBe(1);
    expect(lines.find((l) => l.id === "warn-l1")!.warnings).toContainEqual({
      path: "financials.askingPrice",
      code: "ASKING_PRICE_MISSING",
      message: expect.any(String),
    });
    // A dry run reports the same warnings.
    const dry = await spawnCli([feed, "--rpm", "0", "--dry-run"], env).finished();
    expect(dry.summary!.warnings).toEqual(run.summary!.warnings);
  });

  test("pss-sync report prints the listings that are not live, with why; --warnings adds those live with warnings", async () => {
    const partner = await fx.createPartner();
    const env = { PSS_API_URL: api.url, PSS_API_KEY: partner.apiKey };
    const records = feedLines("rep", { brokers: 1, listings: 3 });
    (records.find((r) => r.id === "rep-l1")!.body as Record<string, unknown>).status = "SOLD";
    expect((await spawnCli([writeFeed(join(dir, "rep.ndjson"), records), "--rpm", "0"], env).finished()).code).toBe(0);
    // No indexer or media service runs here: rep-l2 is marked indexed as the indexer would; rep-l0 waits for it.
    await fx.sql`UPDATE listings SET index_state = 'indexed', indexed_version = version, published_at = now() WHERE partner_id = ${partner.partnerId} AND external_id = 'rep-l2'`;
    // …and its photos processed as the media service would, narrower than recommended (a warning).
    await fx.sql`UPDATE listing_photos SET state = 'ready', width = 800, height = 600
      WHERE listing_id = (SELECT id FROM listings WHERE partner_id = ${partner.partnerId} AND external_id = 'rep-l2')`;

    const json = await reportCommand(["--json"], env);
    expect(json.code).toBe(0);
    const rows = json.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(rows.map((r) => [r.externalListingId, r.state, r.reasons.map((x: { code: string }) => x.code)])).toEqual([
      ["rep-l1", "NOT_VISIBLE", ["STATUS_NOT_VISIBLE"]],
      ["rep-l0", "PROCESSING", expect.arrayContaining(["AWAITING_INDEX"])],
    ]);

    const text = await reportCommand([], env);
    expect(text.code).toBe(0);
    const out = text.stdout.split("\n");
    expect(out[0]).toBe("pss-sync report: 2 of 3 listings are not live");
    expect(out[1]).toMatch(/^  rep-l1  NOT_VISIBLE {7}  Status SOLD is not shown to buyers/);
    expect(out[2]).toMatch(/^  rep-l0  PROCESSING {8}  Stored; waiting for the search index/);

    const withWarnings = await reportCommand(["--warnings", "--json"], env);
    const states = withWarnings.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .map((r) => [r.externalListingId, r.state]);
    expect(states).toEqual([
      ["rep-l2", "LIVE_WITH_WARNINGS"],
      ["rep-l1", "NOT_VISIBLE"],
      ["rep-l0", "PROCESSING"],
    ]);

    const misplaced = await reportCommand(["--dry-run"], env);
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toContain("pss-sync report takes no --dry-run");
  });
});
