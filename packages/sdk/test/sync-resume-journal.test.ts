// pss-sync's checkpoint against the real stack (docs/sync.md, "--resume and the checkpoint"): a PUT the API
// applied but never answered is sent again on --resume, and another partner's key cannot resume from a
// checkpoint. The API is its own process (real PostgreSQL and Redis), the CLI is its own process and is SIGKILLed.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Redis from "ioredis";
import { createPartnerAdmin } from "../../../services/api/src/admin/partner-admin.ts";
import { partnerFixture, startApiProcess, waitFor, type ApiProcess } from "./support/api-process.ts";
import { readNdjson, spawnCli } from "./support/cli-process.ts";
import { feedLines, writeFeed, type FeedLine } from "./support/feeds.ts";

let api: ApiProcess;
let fx: Awaited<ReturnType<typeof partnerFixture>>;
let dir: string;

beforeAll(async () => {
  api = await startApiProcess();
  fx = await partnerFixture();
  dir = mkdtempSync(join(tmpdir(), "pss-sync-journal-"));
});
afterAll(async () => {
  await api?.stop();
  await fx?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A loopback proxy in front of the real API. While `withhold` names a listing, the request carrying it (its PUT,
 * or the batch with an item of that ID) is forwarded, the API's answer is awaited (the change is committed) and
 * then never passed on: the client waits for an answer that will not come, as after a lost response or a timeout.
 */
function withholdingProxy(target: string) {
  let withhold: string | null = null;
  let applied: { request: string; status: number } | null = null;
  const carries = async (request: Request, url: URL): Promise<boolean> => {
    if (withhold === null) return false;
    if (request.method === "PUT") return url.pathname === `/partner/v1/listings/${withhold}`;
    if (request.method !== "POST" || url.pathname !== "/partner/v1/listings/batch") return false;
    const body = (await request
      .clone()
      .json()
      .catch(() => null)) as { items?: { externalListingId?: string }[] } | null;
    return body?.items?.some((item) => item.externalListingId === withhold) ?? false;
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const held = await carries(request, url);
      const forwarded = await fetch(`${target}${url.pathname}${url.search}`, {
        method: request.method,
        headers: request.headers,
        body: request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer(),
      });
      if (held) {
        await forwarded.arrayBuffer();
        applied = { request: `${request.method} ${url.pathname}`, status: forwarded.status };
        return new Promise<Response>(() => {}); // the answer never leaves
      }
      return new Response(forwarded.body, { status: forwarded.status, headers: forwarded.headers });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    withhold(listingId: string | null) {
      withhold = listingId;
      applied = null;
    },
    applied: () => applied,
    stop: () => server.stop(true),
  };
}

const retitled = (lines: FeedLine[], id: string, title: string) =>
  lines.map((l) => (l.id === id ? { ...l, body: { ...l.body, title } } : l));

async function titleInApi(apiKey: string, id: string): Promise<string> {
  const res = await fetch(`${api.url}/partner/v1/listings/${id}`, { headers: { authorization: `Bearer ${apiKey}` } });
  return ((await res.json()) as { listing: { title: string } }).listing.title;
}

for (const mode of [
  { name: "a batch (the default)", flags: [] as string[], request: "POST /partner/v1/listings/batch" },
  {
    name: "a single PUT (--batch-size 1)",
    flags: ["--batch-size", "1"],
    request: "PUT /partner/v1/listings/journal-l1",
  },
])
  test(`a record in ${mode.name} the API applied but never answered (the run SIGKILLed while waiting) is sent again on --resume: the API ends with the feed's body`, async () => {
    const partner = await fx.createPartner();
    const proxy = withholdingProxy(api.url);
    try {
      const env = { PSS_API_URL: proxy.url, PSS_API_KEY: partner.apiKey };
      const base = feedLines("journal", { brokers: 1, listings: 3 });
      const feed = join(dir, `journal-${mode.flags.length}.ndjson`);

      // Day 1: everything synced and acknowledged, the listing's title is "Old".
      writeFeed(feed, retitled(base, "journal-l1", "Old"));
      expect((await spawnCli([feed, "--rpm", "0", ...mode.flags], env).finished()).code).toBe(0);

      // Day 2: the title becomes "New"; the API stores it, its answer never reaches pss-sync, which is killed.
      writeFeed(feed, retitled(base, "journal-l1", "New"));
      proxy.withhold("journal-l1");
      const run = spawnCli([feed, "--resume", "--rpm", "0", "--concurrency", "1", ...mode.flags], env);
      await waitFor("the withheld request to be applied", () => proxy.applied() !== null);
      expect(proxy.applied()).toEqual({ request: mode.request, status: 200 });
      run.proc.kill("SIGKILL");
      await run.proc.exited;
      expect(await titleInApi(partner.apiKey, "journal-l1")).toBe("New");

      // Day 3: the feed goes back to "Old", the hash the checkpoint last saw acknowledged. --resume must send it.
      proxy.withhold(null);
      writeFeed(feed, retitled(base, "journal-l1", "Old"));
      const report = join(dir, `journal-report-${mode.flags.length}.ndjson`);
      const resumed = await spawnCli(
        [feed, "--resume", "--rpm", "0", "--report", report, ...mode.flags],
        env,
      ).finished();
      expect(resumed.code).toBe(0);
      expect(readNdjson(report).find((l) => l.id === "journal-l1")).toMatchObject({
        outcome: "updated",
        httpStatus: 200,
      });
      expect(await titleInApi(partner.apiKey, "journal-l1")).toBe("Old");
      // Acknowledged now: the next resume skips everything.
      const again = await spawnCli([feed, "--resume", "--rpm", "0", ...mode.flags], env).finished();
      expect(again.summary).toMatchObject({ total: 4, skipped: 4 });
    } finally {
      proxy.stop();
    }
  }, 60_000);

test("--resume with another partner's key is refused (exit 2, nothing sent); another key of the same partner resumes", async () => {
  const first = await fx.createPartner();
  const other = await fx.createPartner();
  const feed = writeFeed(join(dir, "shared.ndjson"), feedLines("shared", { brokers: 1, listings: 5 }));
  expect(
    (await spawnCli([feed, "--rpm", "0"], { PSS_API_URL: api.url, PSS_API_KEY: first.apiKey }).finished()).code,
  ).toBe(0);

  const before = api.requests().length;
  const refused = await spawnCli([feed, "--resume", "--rpm", "0"], {
    PSS_API_URL: api.url,
    PSS_API_KEY: other.apiKey,
  }).finished();
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain(
    `pss-sync: ${feed}.checkpoint belongs to another partner (partner:${first.partnerId}), not to this key's partner (partner:${other.partnerId})`,
  );
  expect(refused.stderr).not.toContain(other.apiKey);
  expect(
    api
      .requests()
      .slice(before)
      .map((r) => `${r.method} ${r.path}`),
  ).toEqual(["GET /partner/v1/health"]);
  const [row] = await fx.sql`SELECT count(*)::int AS n FROM listings WHERE partner_id = ${other.partnerId}`;
  expect(row!.n).toBe(0);

  // A second (or rotated) live key of the first partner names the same partner: it resumes, skipping everything.
  const redis = new Redis(process.env.REDIS_URL!, { lazyConnect: true });
  try {
    const { apiKey } = await createPartnerAdmin({ sql: fx.sql, redis }).createKey({ partnerId: first.partnerId });
    const resumed = await spawnCli([feed, "--resume", "--rpm", "0"], {
      PSS_API_URL: api.url,
      PSS_API_KEY: apiKey,
    }).finished();
    expect(resumed.code).toBe(0);
    expect(resumed.summary).toMatchObject({ total: 6, skipped: 6 });
  } finally {
    redis.disconnect();
  }
}, 60_000);
