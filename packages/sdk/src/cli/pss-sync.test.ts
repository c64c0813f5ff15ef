// The CLI's wiring (flags, exit codes, the pacing shared by workers, confirmation) against a plain in-memory
// stand-in for the API. Against the real API: test/sync-cli.test.ts.
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main, partnerIdentity, USAGE } from "./pss-sync.ts";

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function feedFile(lines: unknown[]) {
  const dir = mkdtempSync(join(tmpdir(), "pss-cli-"));
  dirs.push(dir);
  const path = join(dir, "feed.ndjson");
  writeFileSync(path, lines.map((l) => JSON.stringify(l)).join("\n"));
  return { dir, path };
}

const listing = (id: string) => ({ kind: "listing", id, body: { status: "SOLD" } });

/** A stand-in API: health, the OpenAPI document (with or without dryRun) and PUTs, with an optional hook. */
function fakeApi(
  opts: { key?: string; dryRun?: boolean; batches?: boolean; onPut?: (url: string, n: number) => Response | null } = {},
) {
  const puts: { url: string; at: number; dryRun: boolean }[] = [];
  const fetch = async (request: Request) => {
    const url = new URL(request.url);
    if (url.pathname === "/partner/v1/openapi.json") {
      const params = opts.dryRun ? [{ name: "dryRun", in: "query" }] : [];
      return Response.json({
        paths: {
          "/partner/v1/brokers/{externalBrokerId}": { put: { parameters: params } },
          "/partner/v1/listings/{externalListingId}": { put: { parameters: params } },
          ...(opts.batches === false
            ? {}
            : { "/partner/v1/brokers/batch": { post: {} }, "/partner/v1/listings/batch": { post: {} } }),
        },
      });
    }
    if (request.headers.get("authorization") !== `Bearer ${opts.key ?? "pss_live_k"}`)
      return Response.json({ status: "error", error: "Unauthorized" }, { status: 401 });
    if (url.pathname === "/partner/v1/health")
      return Response.json({ status: "success", timestamp: new Date().toISOString() });
    puts.push({ url: url.pathname, at: Date.now(), dryRun: url.searchParams.get("dryRun") === "true" });
    const hooked = opts.onPut?.(url.pathname, puts.length);
    if (hooked) return hooked;
    if (url.searchParams.get("dryRun") === "true")
      return Response.json({ status: "success", dryRun: true, outcome: "wouldCreate", changedPaths: [] });
    const id = puts.length;
    return Response.json(
      {
        status: "success",
        message: "Listing created",
        serviceListingId: id,
        serviceListingUrl: `https://m/listings/${id}`,
      },
      { status: 201 },
    );
  };
  return { fetch, puts };
}

function run(
  argv: string[],
  api: ReturnType<typeof fakeApi>,
  extra: { stdinIsTTY?: boolean; ask?: (q: string) => Promise<string> } = {},
) {
  let err = "";
  const code = main({
    // One PUT per record unless the test says otherwise (the stand-in answers PUTs); batches: the last test.
    argv: argv.includes("--batch-size") ? argv : [...argv, "--batch-size", "1"],
    env: { PSS_API_URL: "http://api.test", PSS_API_KEY: "pss_live_k" },
    stderr: { write: (t: string) => void (err += t), isTTY: false },
    stdinIsTTY: extra.stdinIsTTY ?? false,
    ask: extra.ask,
    fetch: api.fetch,
  });
  return code.then((c) => ({ code: c, err }));
}

test("flags are checked before anything is sent: exit 2 with a sentence", async () => {
  const api = fakeApi();
  const { path } = feedFile([listing("L-1")]);
  expect(await run([], api)).toMatchObject({ code: 2, err: expect.stringContaining("give exactly one feed file") });
  expect(await run([path, "--concurrency", "0"], api)).toMatchObject({
    code: 2,
    err: expect.stringContaining("--concurrency must be an integer of at least 1"),
  });
  expect(await run([path, "--bogus"], api)).toMatchObject({ code: 2, err: expect.stringContaining("--bogus") });
  expect(await run([path, "--yes"], api)).toMatchObject({
    code: 2,
    err: expect.stringContaining("--yes only confirms --archive-missing"),
  });
  expect(await run([`${path}.missing`], api)).toMatchObject({ code: 2, err: expect.stringContaining("no such file") });
  expect(api.puts).toEqual([]);
  expect(await run(["--help"], api)).toEqual({ code: 0, err: USAGE });
});

test("a refused key stops the run before the feed is read (exit 2), and the key is never printed", async () => {
  const api = fakeApi({ key: "pss_live_other" });
  const { path } = feedFile([listing("L-1")]);
  const { code, err } = await run([path], api);
  expect(code).toBe(2);
  expect(err).toContain("refused the key (401 Unauthorized)");
  expect(err).not.toContain("pss_live_k");
  expect(api.puts).toEqual([]);
});

test("--dry-run against an API without dry-run sends nothing; with it, every PUT carries dryRun=true", async () => {
  const { path } = feedFile([listing("L-1"), listing("L-2")]);
  const without = fakeApi({ dryRun: false });
  expect(await run([path, "--dry-run"], without)).toMatchObject({
    code: 2,
    err: expect.stringContaining("does not offer dry-run"),
  });
  expect(without.puts).toEqual([]);
  const withDryRun = fakeApi({ dryRun: true });
  const { code, err } = await run([path, "--dry-run", "--rpm", "0"], withDryRun);
  expect(code).toBe(0);
  expect(withDryRun.puts.every((p) => p.dryRun)).toBe(true);
  expect(JSON.parse(err.trim().split("\n").at(-1)!)).toMatchObject({ type: "summary", created: 2, dryRun: true });
});

test("a 429 with Retry-After holds every worker, not only the one that got it", async () => {
  const { path, dir } = feedFile(Array.from({ length: 12 }, (_, i) => listing(`L-${i}`)));
  let limitedAt = 0;
  const api = fakeApi({
    onPut: (_, n) => {
      if (n !== 3) return null;
      limitedAt = Date.now();
      return Response.json(
        { status: "error", error: "Too many requests" },
        { status: 429, headers: { "retry-after": "1" } },
      );
    },
  });
  const report = join(dir, "report.ndjson");
  const { code } = await run([path, "--rpm", "0", "--concurrency", "4", "--report", report], api);
  expect(code).toBe(0);
  // Requests that started after the 429 waited for the pause (a little slack for timer granularity).
  const after = api.puts.slice(3).filter((p) => p.at >= limitedAt);
  expect(after.length).toBeGreaterThan(0);
  for (const p of after.slice(3)) expect(p.at - limitedAt).toBeGreaterThanOrEqual(950);
  const lines = readFileSync(report, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  expect(lines.filter((l) => l.outcome === "created")).toHaveLength(12);
});

test("--archive-missing without a terminal needs --yes: nothing is archived and the exit code says so", async () => {
  const { path, dir } = feedFile([listing("L-1"), listing("L-2")]);
  const api = fakeApi();
  const checkpoint = join(dir, "cp");
  expect((await run([path, "--rpm", "0", "--checkpoint", checkpoint], api)).code).toBe(0);
  writeFileSync(path, JSON.stringify(listing("L-1")));
  const before = api.puts.length;
  const refused = await run([path, "--rpm", "0", "--checkpoint", checkpoint, "--archive-missing"], api);
  expect(refused.code).toBe(1);
  expect(refused.err).toContain("pass --yes");
  expect(api.puts.length - before).toBe(1);
  const asked: string[] = [];
  const confirmed = await run([path, "--rpm", "0", "--checkpoint", checkpoint, "--archive-missing"], api, {
    stdinIsTTY: true,
    ask: async (q) => (asked.push(q), "yes"),
  });
  expect(confirmed.code).toBe(0);
  expect(asked[0]).toContain("Archive 1 listing(s) that are not in the feed (L-2)");
  expect(api.puts.at(-1)!.url).toBe("/partner/v1/listings/L-2");
});

test("a failed record makes the exit code 1 and is named in the summary", async () => {
  const { path } = feedFile([listing("L-1"), { kind: "listing", id: "L-2", body: { status: "LIVE" } }]);
  const { code, err } = await run([path, "--rpm", "0"], fakeApi());
  expect(code).toBe(1);
  const summary = JSON.parse(err.trim().split("\n").at(-1)!);
  expect(summary).toMatchObject({
    created: 1,
    failed: 1,
    firstFailures: [{ kind: "listing", id: "L-2", error: expect.stringContaining("status: must be one of") }],
  });
});

test("batches (the default): records go in POST …/batch requests, and --rpm counts their items as the API does", async () => {
  const { path, dir } = feedFile(Array.from({ length: 10 }, (_, i) => listing(`L-${i}`)));
  const api = fakeApi({
    onPut: (url) => {
      if (!url.endsWith("/batch")) return null;
      return Response.json({
        status: "success",
        dryRun: false,
        counts: { created: 5, updated: 0, unchanged: 0, failed: 0 },
        results: Array.from({ length: 5 }, (_, i) => ({
          externalListingId: `x${i}`,
          httpStatus: 201,
          changed: true,
          body: {
            status: "success",
            message: "Listing created",
            serviceListingId: i + 1,
            serviceListingUrl: `https://m/listings/${i + 1}`,
          },
        })),
      });
    },
  });
  const report = join(dir, "report.ndjson");
  // 600 records a minute: 100 ms per record, so the second batch of 5 waits half a second after the first.
  const { code } = await run(
    [path, "--batch-size", "5", "--concurrency", "1", "--rpm", "600", "--report", report],
    api,
  );
  expect(code).toBe(0);
  expect(api.puts.map((p) => p.url)).toEqual(["/partner/v1/listings/batch", "/partner/v1/listings/batch"]);
  expect(api.puts[1]!.at - api.puts[0]!.at).toBeGreaterThanOrEqual(450);
  expect(
    readFileSync(report, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).outcome),
  ).toEqual(Array(10).fill("created"));
  expect((await run([path, "--batch-size", "501"], api)).err).toContain("--batch-size must be at most 500");
  // An API without the batch routes (an older version): one PUT per record.
  const older = fakeApi({ batches: false });
  expect((await run([path, "--batch-size", "5", "--rpm", "0"], older)).code).toBe(0);
  expect(older.puts.map((p) => p.url)).toEqual(Array.from({ length: 10 }, (_, i) => `/partner/v1/listings/L-${i}`));
});

test("the checkpoint's partner is the one the API names; an API that names none binds it to the key (a fingerprint, never the key)", () => {
  expect(partnerIdentity({ partnerId: "2b9c7d3e-61a4-4f2e-9a55-0c2f1f0f6a11" }, "pss_live_a")).toBe(
    "partner:2b9c7d3e-61a4-4f2e-9a55-0c2f1f0f6a11",
  );
  expect(partnerIdentity({ partnerId: "2b9c7d3e-61a4-4f2e-9a55-0c2f1f0f6a11" }, "pss_live_b")).toBe(
    partnerIdentity({ partnerId: "2b9c7d3e-61a4-4f2e-9a55-0c2f1f0f6a11" }, "pss_live_a"),
  );
  const byKey = partnerIdentity({}, "pss_live_secret-key");
  expect(byKey).toMatch(/^key:[0-9a-f]{16}$/);
  expect(byKey).not.toContain("secret");
  expect(partnerIdentity({}, "pss_live_other-key")).not.toBe(byKey);
});

test("a checkpoint of an earlier pss-sync (no partner) is refused with exit code 2 until --bind-checkpoint binds it", async () => {
  const { path, dir } = feedFile([listing("L-1"), listing("L-2")]);
  const api = fakeApi();
  const checkpoint = join(dir, "cp");
  writeFileSync(
    checkpoint,
    `${JSON.stringify({ type: "pss-sync-checkpoint", version: 1, apiUrl: "http://api.test", keyMode: "pss_live" })}\n${JSON.stringify({ kind: "listing", id: "L-1", hash: null, serviceId: 1, url: "u" })}\n`,
  );
  const refused = await run([path, "--rpm", "0", "--resume", "--checkpoint", checkpoint], api);
  expect(refused.code).toBe(2);
  expect(refused.err).toContain("did not record whose records it holds");
  expect(refused.err).toContain("--bind-checkpoint");
  expect(api.puts).toEqual([]);
  const bound = await run([path, "--rpm", "0", "--resume", "--checkpoint", checkpoint, "--bind-checkpoint"], api);
  expect(bound.code).toBe(0);
  expect(api.puts.map((p) => p.url)).toEqual(["/partner/v1/listings/L-1", "/partner/v1/listings/L-2"]);
  // Bound to this key's partner: the next run needs no flag.
  expect((await run([path, "--rpm", "0", "--resume", "--checkpoint", checkpoint], api)).code).toBe(0);
});
