// The sync run's logic against a plain in-memory stand-in for the client (the real API: test/sync-cli.test.ts).
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PssApiError, PssNetworkError } from "../client/errors.ts";
import type { PartnerClient } from "../client/partner-client.ts";
import { createRecordValidator } from "../validation/record-validator.ts";
import { openCheckpoint } from "./checkpoint.ts";
import type { Feed, FeedRecord } from "./feed.ts";
import type { ReportLine } from "./report.ts";
import { runSync, type SyncOptions } from "./run-sync.ts";

const validator = createRecordValidator();
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
function checkpoint() {
  const dir = mkdtempSync(join(tmpdir(), "pss-run-"));
  dirs.push(dir);
  return openCheckpoint(join(dir, "cp"), {
    apiUrl: "https://api.example.com",
    apiKey: "pss_live_x",
    partner: "partner:p-1",
  });
}

const broker = (id: string, name = "Jane"): FeedRecord => ({
  line: 1,
  kind: "broker",
  id,
  body: { name, email: "jane@example.com" },
});
const listing = (id: string, extra: Record<string, unknown> = {}): FeedRecord => ({
  line: 2,
  kind: "listing",
  id,
  body: {
    brokerExternalId: "B-1",
    status: "FOR_SALE",
    businessType: "Retail",
    location: { city: "Austin", state: "TX", country: "US", visibility: "SHOW_CITY_STATE" },
    ...extra,
  },
});

/** Stores what it is sent, answers like the API (201 new / 200 known), and records the order and concurrency. */
function fakeClient(
  opts: {
    fail?: (kind: string, id: string) => Error | null;
    delayMs?: number;
    applyThenFail?: (kind: string, id: string) => Error | null;
  } = {},
) {
  const stored = new Map<string, unknown>();
  const calls: { kind: string; id: string; body: unknown; dryRun: boolean }[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const put = (kind: "broker" | "listing") => async (id: string, body: unknown, o?: { dryRun?: boolean }) => {
    calls.push({ kind, id, body, dryRun: o?.dryRun ?? false });
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await Bun.sleep(opts.delayMs ?? 1);
    inFlight -= 1;
    const failure = opts.fail?.(kind, id);
    if (failure) throw failure;
    const key = `${kind}:${id}`;
    const existed = stored.has(key);
    if (o?.dryRun)
      return {
        status: "success",
        dryRun: true,
        outcome: existed
          ? JSON.stringify(stored.get(key)) === JSON.stringify(body)
            ? "noChange"
            : "wouldUpdate"
          : "wouldCreate",
        changedPaths: existed ? ["status"] : [],
        httpStatus: 200,
        requestId: "r",
      };
    stored.set(key, body);
    const lost = opts.applyThenFail?.(kind, id);
    if (lost) throw lost;
    const n = [...stored.keys()].indexOf(key) + 1;
    const common = { status: "success", httpStatus: existed ? 200 : 201, created: !existed, requestId: "r" };
    return kind === "broker"
      ? {
          ...common,
          message: "Broker created",
          serviceBrokerId: String(n),
          serviceProfileUrl: `https://m/brokers/${n}`,
        }
      : { ...common, message: "Listing created", serviceListingId: n, serviceListingUrl: `https://m/listings/${n}` };
  };
  /** A batch as the API answers it: each item its PUT's answer (an API refusal in its result, not thrown). */
  const many = (kind: "broker" | "listing") => async (items: Record<string, any>[], o?: { dryRun?: boolean }) => {
    const results = [];
    for (const item of items) {
      const id = kind === "broker" ? item.externalBrokerId : item.externalListingId;
      const body = kind === "broker" ? item.broker : item.listing;
      const before = JSON.stringify(stored.get(`${kind}:${id}`));
      try {
        const {
          httpStatus,
          created: _c,
          requestId: _r,
          ...answer
        } = (await put(kind)(id, body, o)) as Record<string, any>;
        results.push({ id, httpStatus, changed: !o?.dryRun && before !== JSON.stringify(body), body: answer });
      } catch (err) {
        if (!(err instanceof PssApiError)) throw err;
        results.push({
          id,
          httpStatus: err.status,
          changed: false,
          body: { status: "error", error: err.error, details: err.details },
        });
      }
    }
    batches.push({ kind, size: items.length });
    return {
      status: "success",
      dryRun: o?.dryRun ?? false,
      counts: {},
      results,
      httpStatus: 200,
      requestId: "batch-r",
    };
  };
  const batches: { kind: string; size: number }[] = [];
  const getListing = async (id: string) => {
    if (!stored.has(`listing:${id}`)) throw new PssApiError(404, "Listing not found", [], "r");
    return stored.get(`listing:${id}`);
  };
  const client = {
    putBroker: put("broker"),
    putListing: put("listing"),
    getListing,
    brokers: { upsertMany: many("broker") },
    listings: { upsertMany: many("listing") },
  } as unknown as PartnerClient;
  return { client, calls, stored, batches, maxInFlight: () => maxInFlight };
}

async function sync(feed: Feed, options: Partial<SyncOptions> & { client: PartnerClient }) {
  const lines: ReportLine[] = [];
  // The tests below describe one PUT per record (batchSize 1); "batches" at the end checks batches give the same.
  const summary = await runSync(feed, {
    validator,
    checkpoint: options.checkpoint ?? checkpoint(),
    report: { write: (l) => void lines.push(l), close() {} },
    batchSize: 1,
    ...options,
  });
  return { summary, lines, byId: Object.fromEntries(lines.map((l) => [`${l.kind}:${l.id}`, l])) };
}

describe("runSync", () => {
  test("brokers go before every listing, within the concurrency bound, and every record gets one report line", async () => {
    const fake = fakeClient({ delayMs: 5 });
    const records = [...Array.from({ length: 30 }, (_, i) => listing(`L-${i}`)), broker("B-1"), broker("B-2")];
    const { summary, lines } = await sync({ records, problems: [] }, { client: fake.client, concurrency: 4 });
    const firstListing = fake.calls.findIndex((c) => c.kind === "listing");
    expect(
      fake.calls
        .slice(0, firstListing)
        .map((c) => c.id)
        .sort(),
    ).toEqual(["B-1", "B-2"]);
    expect(fake.maxInFlight()).toBe(4);
    expect(summary).toMatchObject({ total: 32, created: 32, failed: 0 });
    expect(lines).toHaveLength(32);
    expect(lines.find((l) => l.id === "L-3")).toEqual({
      kind: "listing",
      id: "L-3",
      outcome: "created",
      httpStatus: 201,
      serviceId: expect.any(Number),
      url: expect.stringContaining("/listings/"),
      error: null,
    });
  });

  test("records refused locally, unreadable lines and repeated IDs are failed and never sent; the rest go through", async () => {
    const fake = fakeClient();
    const feed: Feed = {
      records: [
        broker("B-1"),
        listing("L-1", { financials: { askingPrice: "cheap" } }),
        listing("L-2"),
        { ...listing("L-2"), line: 9 },
        listing(" bad id"),
      ],
      problems: [{ line: 7, kind: null, id: null, error: "line 7: not valid JSON" }],
    };
    const { summary, byId, lines } = await sync(feed, { client: fake.client });
    expect(fake.calls.map((c) => c.id)).toEqual(["B-1", "L-2"]);
    expect(summary).toMatchObject({ created: 2, failed: 4 });
    expect(byId["listing:L-1"]).toMatchObject({
      outcome: "failed",
      httpStatus: null,
      error: "line 2: financials.askingPrice: must be a number",
    });
    expect(lines.filter((l) => l.id === "L-2").map((l) => [l.outcome, l.error])).toEqual([
      ["failed", "line 9: listing L-2 is already given on line 2; each record may appear once"],
      ["created", null],
    ]);
    expect(byId["listing: bad id"]!.error).toContain("externalListingId");
    expect(byId["null:null"]).toMatchObject({ outcome: "failed", error: "line 7: not valid JSON" });
  });

  test("API refusals and lost connections fail their record with the API's sentence and status", async () => {
    const fake = fakeClient({
      fail: (_, id) =>
        id === "L-404"
          ? new PssApiError(404, "Broker not found", [], "req-9")
          : id === "L-net"
            ? new PssNetworkError("PUT …: Unable to connect (after 10 attempts)")
            : id === "L-400"
              ? new PssApiError(
                  400,
                  "title: x",
                  [
                    { path: "title", message: "x" },
                    { path: "status", message: "y" },
                  ],
                  "req-8",
                )
              : null,
    });
    const { byId, summary } = await sync(
      { records: [listing("L-404"), listing("L-net"), listing("L-400"), listing("L-ok")], problems: [] },
      { client: fake.client },
    );
    expect(byId["listing:L-404"]).toMatchObject({
      outcome: "failed",
      httpStatus: 404,
      error: "Broker not found (request req-9)",
    });
    expect(byId["listing:L-net"]).toMatchObject({
      outcome: "failed",
      httpStatus: null,
      error: expect.stringContaining("Unable to connect"),
    });
    expect(byId["listing:L-400"]!.error).toBe("title: x; status: y (request req-8)");
    expect(summary).toMatchObject({ created: 1, failed: 3 });
  });

  test("--resume skips what the API acknowledged with the same content and sends what changed", async () => {
    const fake = fakeClient();
    const cp = checkpoint();
    await sync(
      { records: [broker("B-1"), listing("L-1"), listing("L-2")], problems: [] },
      { client: fake.client, checkpoint: cp },
    );
    fake.calls.length = 0;
    const { byId, summary } = await sync(
      { records: [broker("B-1"), listing("L-1", { status: "SOLD" }), listing("L-2"), listing("L-3")], problems: [] },
      { client: fake.client, checkpoint: cp, resume: true },
    );
    expect(fake.calls.map((c) => c.id)).toEqual(["L-1", "L-3"]);
    expect(byId["broker:B-1"]).toMatchObject({ outcome: "skipped", httpStatus: null, serviceId: "1" });
    expect(byId["listing:L-1"]!.outcome).toBe("updated");
    expect(byId["listing:L-3"]!.outcome).toBe("created");
    expect(summary).toMatchObject({ skipped: 2, updated: 1, created: 1 });
  });

  test("without --resume everything is sent; a 200 for content the API already acknowledged is 'unchanged'", async () => {
    const fake = fakeClient();
    const cp = checkpoint();
    await sync({ records: [listing("L-1")], problems: [] }, { client: fake.client, checkpoint: cp });
    const { byId } = await sync(
      { records: [listing("L-1"), listing("L-2")], problems: [] },
      { client: fake.client, checkpoint: cp },
    );
    expect(byId["listing:L-1"]).toMatchObject({ outcome: "unchanged", httpStatus: 200 });
  });

  test("--dry-run maps the API's verdict and records nothing in the checkpoint", async () => {
    const fake = fakeClient();
    const cp = checkpoint();
    await sync({ records: [listing("L-1")], problems: [] }, { client: fake.client, checkpoint: cp });
    const { byId } = await sync(
      { records: [listing("L-1"), listing("L-2"), listing("L-3", { status: "SOLD" })], problems: [] },
      { client: fake.client, checkpoint: cp, dryRun: true },
    );
    expect(fake.calls.filter((c) => c.dryRun).map((c) => c.id)).toEqual(["L-1", "L-2", "L-3"]);
    expect(byId["listing:L-1"]).toMatchObject({ outcome: "unchanged", changedPaths: ["status"] });
    expect(byId["listing:L-2"]!.outcome).toBe("created");
    expect(cp.get("listing", "L-2")).toBeUndefined();
  });

  describe("--archive-missing", () => {
    const confirmWith = (answer: boolean, asked: string[][]) => ({
      confirm: async (ids: string[]) => (asked.push(ids), answer),
    });

    test("archives, once confirmed, the listings synced before that are missing from this feed", async () => {
      const fake = fakeClient();
      const cp = checkpoint();
      await sync(
        { records: [listing("L-1"), listing("L-2"), listing("L-3")], problems: [] },
        { client: fake.client, checkpoint: cp },
      );
      const asked: string[][] = [];
      const { summary, byId } = await sync(
        { records: [listing("L-1")], problems: [] },
        { client: fake.client, checkpoint: cp, archiveMissing: confirmWith(true, asked) },
      );
      expect(asked).toEqual([["L-2", "L-3"]]);
      expect(fake.stored.get("listing:L-2")).toEqual({ status: "ARCHIVED" });
      expect(byId["listing:L-3"]).toMatchObject({ outcome: "updated", archive: true });
      expect(summary).toMatchObject({ archived: 2, archiveSkipped: null, total: 3 });
      // Already archived: the next run does not archive them again.
      const again = await sync(
        { records: [listing("L-1")], problems: [] },
        { client: fake.client, checkpoint: cp, archiveMissing: confirmWith(true, asked) },
      );
      expect(again.summary.archived).toBe(0);
      expect(asked).toHaveLength(1);
    });

    test("not confirmed: nothing is archived; a feed with unreadable lines archives nothing", async () => {
      const fake = fakeClient();
      const cp = checkpoint();
      await sync({ records: [listing("L-1"), listing("L-2")], problems: [] }, { client: fake.client, checkpoint: cp });
      const declined = await sync(
        { records: [listing("L-1")], problems: [] },
        { client: fake.client, checkpoint: cp, archiveMissing: confirmWith(false, []) },
      );
      expect(declined.summary).toMatchObject({ archived: 0, archiveSkipped: "not confirmed" });
      expect(fake.stored.get("listing:L-2")).not.toEqual({ status: "ARCHIVED" });
      const unreadable = await sync(
        { records: [listing("L-1")], problems: [{ line: 2, kind: null, id: null, error: "line 2: not valid JSON" }] },
        { client: fake.client, checkpoint: cp, archiveMissing: confirmWith(true, []) },
      );
      expect(unreadable.summary.archiveSkipped).toContain("could not be read");
    });

    test("in a dry run, archiving is previewed without asking", async () => {
      const fake = fakeClient();
      const cp = checkpoint();
      await sync({ records: [listing("L-1"), listing("L-2")], problems: [] }, { client: fake.client, checkpoint: cp });
      const asked: string[][] = [];
      const { byId } = await sync(
        { records: [listing("L-1")], problems: [] },
        { client: fake.client, checkpoint: cp, dryRun: true, archiveMissing: confirmWith(false, asked) },
      );
      expect(asked).toEqual([]);
      expect(byId["listing:L-2"]).toMatchObject({ outcome: "updated", archive: true });
      expect(cp.get("listing", "L-2")?.archived).toBeUndefined();
    });
  });

  test("a PUT the API applied but never answered stays in doubt: --resume sends it again even when the feed went back to the acknowledged body", async () => {
    const cp = checkpoint();
    const first = fakeClient();
    await sync({ records: [listing("L-1", { title: "Old" })], problems: [] }, { client: first.client, checkpoint: cp });
    // The new title is stored, but no answer comes back (timeouts until the last attempt).
    const lossy = fakeClient({
      applyThenFail: () => new PssNetworkError("PUT …: no answer within 30000 ms (after 10 attempts)"),
    });
    lossy.stored.set("listing:L-1", first.stored.get("listing:L-1"));
    const lost = await sync(
      { records: [listing("L-1", { title: "New" })], problems: [] },
      { client: lossy.client, checkpoint: cp },
    );
    expect(lost.byId["listing:L-1"]!.outcome).toBe("failed");
    expect(lossy.stored.get("listing:L-1")).toMatchObject({ title: "New" });
    expect(cp.get("listing", "L-1")).toMatchObject({ sending: expect.any(String) });
    // The feed goes back to the old title: the checkpoint's acknowledged hash is the old one, yet it is sent.
    const healthy = fakeClient();
    healthy.stored.set("listing:L-1", lossy.stored.get("listing:L-1"));
    const { byId, summary } = await sync(
      { records: [listing("L-1", { title: "Old" })], problems: [] },
      { client: healthy.client, checkpoint: cp, resume: true },
    );
    expect(healthy.calls.map((c) => c.id)).toEqual(["L-1"]);
    expect(healthy.stored.get("listing:L-1")).toMatchObject({ title: "Old" });
    expect(byId["listing:L-1"]).toMatchObject({ outcome: "updated", httpStatus: 200 });
    expect(summary).toMatchObject({ skipped: 0, updated: 1 });
    // Acknowledged now: the next resume skips it.
    const again = await sync(
      { records: [listing("L-1", { title: "Old" })], problems: [] },
      { client: healthy.client, checkpoint: cp, resume: true },
    );
    expect(again.summary).toMatchObject({ skipped: 1 });
  });

  test("a body the API refused (it stored nothing) leaves the record as it was: acknowledged content is still skipped", async () => {
    const cp = checkpoint();
    const fake = fakeClient();
    await sync({ records: [listing("L-1")], problems: [] }, { client: fake.client, checkpoint: cp });
    const refusing = fakeClient({
      fail: (_, id) => (id === "L-1" || id === "L-new" ? new PssApiError(400, "title: too long", [], "r") : null),
    });
    await sync(
      { records: [listing("L-1", { title: "x" }), listing("L-new")], problems: [] },
      { client: refusing.client, checkpoint: cp },
    );
    expect(cp.get("listing", "L-1")).not.toHaveProperty("sending");
    expect(cp.get("listing", "L-new")).toBeUndefined();
    const { summary } = await sync(
      { records: [listing("L-1")], problems: [] },
      { client: fake.client, checkpoint: cp, resume: true },
    );
    expect(summary).toMatchObject({ skipped: 1 });
  });

  test("--archive-missing: a listing sent once without an answer is archived if the API has it, forgotten if it has not", async () => {
    const cp = checkpoint();
    const lossy = fakeClient({
      applyThenFail: (_, id) => (id === "L-applied" ? new PssNetworkError("no answer") : null),
      fail: (_, id) => (id === "L-lost" ? new PssNetworkError("no answer") : null),
    });
    await sync(
      { records: [listing("L-1"), listing("L-applied"), listing("L-lost")], problems: [] },
      { client: lossy.client, checkpoint: cp },
    );
    expect(cp.get("listing", "L-lost")).toMatchObject({ hash: null, sending: expect.any(String) });
    const asked: string[][] = [];
    const ok = fakeClient();
    for (const [k, v] of lossy.stored) ok.stored.set(k, v);
    const { summary } = await sync(
      { records: [listing("L-1")], problems: [] },
      { client: ok.client, checkpoint: cp, archiveMissing: { confirm: async (ids) => (asked.push(ids), true) } },
    );
    expect(asked).toEqual([["L-applied"]]);
    expect(ok.stored.get("listing:L-applied")).toEqual({ status: "ARCHIVED" });
    expect(summary).toMatchObject({ archived: 1, failed: 0 });
    expect(cp.get("listing", "L-lost")).toBeUndefined();
  });

  test("an abort stops taking records; unfinished ones get no report line and stay in doubt in the checkpoint", async () => {
    const controller = new AbortController();
    const fake = fakeClient({ delayMs: 5 });
    const cp = checkpoint();
    const records = Array.from({ length: 50 }, (_, i) => listing(`L-${i}`));
    const lines: ReportLine[] = [];
    const summary = await runSync(
      { records, problems: [] },
      {
        client: fake.client,
        validator,
        checkpoint: cp,
        concurrency: 2,
        batchSize: 1,
        signal: controller.signal,
        report: { write: (l) => (lines.push(l), lines.length === 10 && controller.abort()), close() {} },
      },
    );
    expect(summary.interrupted).toBe(true);
    expect(lines.length).toBeLessThan(50);
    const entries = [...cp.entries()];
    expect(entries.filter((e) => !e.sending).length).toBe(lines.length);
    // Those in flight when it stopped: sent, no answer read; --resume sends them again.
    expect(entries.filter((e) => e.sending).length).toBeLessThanOrEqual(2);
    expect(entries.length).toBeGreaterThanOrEqual(lines.length);
  });

  describe("batches (the default: 100 records per request)", () => {
    const feedOf = () => {
      const records = [
        broker("B-1"),
        broker("B-2", "Bob"),
        ...Array.from({ length: 230 }, (_, i) => listing(`L-${i}`, i % 50 === 7 ? { brokerExternalId: "B-404" } : {})),
      ];
      records.push(listing("L-bad", { status: "LIVE" })); // refused locally, never sent
      return { records, problems: [] };
    };
    const refuseUnknownBroker = (kind: string, id: string) =>
      kind === "listing" && /^L-(7|57|107|157|207)$/.test(id)
        ? new PssApiError(404, "Broker not found", [], "req-9")
        : null;
    const verdicts = (lines: ReportLine[]) =>
      Object.fromEntries(lines.map((l) => [`${l.kind}:${l.id}`, [l.outcome, l.httpStatus]]));

    test("every record gets the report line one PUT per record gives it, in a few requests", async () => {
      const single = fakeClient({ fail: refuseUnknownBroker });
      const batched = fakeClient({ fail: refuseUnknownBroker });
      const [cpSingle, cpBatched] = [checkpoint(), checkpoint()];
      const one = await sync(feedOf(), { client: single.client, checkpoint: cpSingle });
      const many = await sync(feedOf(), { client: batched.client, checkpoint: cpBatched, batchSize: 100 });
      expect(verdicts(many.lines)).toEqual(verdicts(one.lines));
      expect(many.summary).toMatchObject({ created: 227, failed: 6, total: 233 });
      // Brokers first (their batch done before any listing is sent), then the listings' batches, in flight together.
      expect(batched.batches[0]).toEqual({ kind: "broker", size: 2 });
      expect(
        batched.batches
          .slice(1)
          .map((b) => `${b.kind}:${b.size}`)
          .sort(),
      ).toEqual(["listing:100", "listing:100", "listing:30"]);
      expect(many.byId["listing:L-7"]).toMatchObject({
        outcome: "failed",
        httpStatus: 404,
        error: "Broker not found (request batch-r)",
      });
      // Sent again: identical repeats are unchanged in both modes; the checkpoints hold the same records.
      const again = await sync(feedOf(), { client: batched.client, checkpoint: cpBatched, batchSize: 100 });
      const againSingle = await sync(feedOf(), { client: single.client, checkpoint: cpSingle });
      expect(verdicts(again.lines)).toEqual(verdicts(againSingle.lines));
      expect(again.summary).toMatchObject({ created: 0, unchanged: 227, failed: 6 });
      expect([...cpBatched.entries()].map((e) => e.id).sort()).toEqual([...cpSingle.entries()].map((e) => e.id).sort());
    });

    test("a dry run in batches maps each item's verdict and records nothing", async () => {
      const fake = fakeClient();
      const cp = checkpoint();
      const { summary } = await sync(
        { records: [broker("B-1"), listing("L-1"), listing("L-2")], problems: [] },
        { client: fake.client, checkpoint: cp, batchSize: 100, dryRun: true },
      );
      expect(summary).toMatchObject({ created: 3, dryRun: true });
      expect(fake.calls.every((c) => c.dryRun)).toBe(true);
      // The listings name a broker the dry run would create: they are checked with it inline.
      expect(
        fake.calls
          .filter((c) => c.kind === "listing")
          .every((c) => (c.body as { broker?: unknown }).broker !== undefined),
      ).toBe(true);
      expect([...cp.entries()]).toEqual([]);
    });

    test("an item answered 429 is sent again in a later batch; a batch that gets no answer fails its records", async () => {
      let limited = 0;
      const fake = fakeClient({
        fail: (_kind, id) =>
          id === "L-3" && limited++ === 0 ? new PssApiError(429, "Too many requests", [], "r") : null,
      });
      const { byId } = await sync(
        { records: [broker("B-1"), ...Array.from({ length: 5 }, (_, i) => listing(`L-${i}`))], problems: [] },
        { client: fake.client, batchSize: 100 },
      );
      expect(byId["listing:L-3"]).toMatchObject({ outcome: "created", httpStatus: 201 });
      expect(fake.batches.map((b) => b.size)).toEqual([1, 5, 1]);

      const down = fakeClient({
        fail: (kind) => (kind === "listing" ? new PssNetworkError("connection refused") : null),
      });
      const { summary, lines } = await sync(
        { records: [broker("B-1"), listing("L-1"), listing("L-2")], problems: [] },
        { client: down.client, batchSize: 100 },
      );
      expect(summary).toMatchObject({ created: 1, failed: 2 });
      expect(lines.filter((l) => l.outcome === "failed").map((l) => l.error)).toEqual([
        "connection refused",
        "connection refused",
      ]);
    });
  });
});
