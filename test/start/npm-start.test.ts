// Issue 12: "On a fresh clone, `npm start` stores variants in the local S3-compatible server, and a listing's
// photos load in a browser from there." What `npm start` runs after its bootstrap (`bun scripts/start.ts`) runs
// here as a real process, with this run's server URLs (so it starts no infrastructure), every port free, and the
// default storage (MEDIA_STORAGE unset: s3). A partner PUTs a listing with two photos from a loopback image host;
// the variants must land in the object store (and nowhere on local disk), the buyer's listing page must show both
// photos in a real Chromium, and SIGTERM must stop start.ts and every process under it, leaving its ports silent.
//
// Isolation on the shared servers: unique consumer groups (each starting at the topics' end), a unique search
// alias and a unique key prefix in the shared bucket; the media GC and the reconciler are off (they would sweep
// or index what other tests left in this database).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Redis from "ioredis";
import { Kafka, logLevel } from "kafkajs";
import postgres from "postgres";
import type { Response as BrowserResponse } from "playwright-core";
import { mediaRelativePath, Topics, topicSpecs } from "@pss/contracts";
import { ensureTopics } from "@pss/service-kit";
import { createPartnerAdmin } from "../../services/api/src/admin/partner-admin.ts";
import { launchChromium, type ChromiumSession } from "../../services/marketplace/test/support/browser.ts";
import { sample } from "../../services/api/test/support/harness.ts";
import { startImageServer, type ImageServer } from "../../services/media/test/support/image-server.ts";
import { startGroupAtEnd } from "../support/consumer-groups.ts";
import { testS3Env, testUrls, uniqueName } from "../support/env.ts";
import { freePort } from "../support/ports.ts";

const ROOT = join(import.meta.dir, "..", "..");
/** The name the browser uses for the API (mapped to loopback), as a buyer would use the public address. */
const PUBLIC_HOST = "start.example.test";

const urls = testUrls();
const s3Env = testS3Env();
const s3Prefix = `${uniqueName("npm-start")}/`;
const s3 = new Bun.S3Client({
  endpoint: s3Env.S3_ENDPOINT,
  bucket: s3Env.S3_BUCKET,
  region: s3Env.S3_REGION,
  accessKeyId: s3Env.S3_ACCESS_KEY_ID,
  secretAccessKey: s3Env.S3_SECRET_ACCESS_KEY,
});
const sql = postgres(urls.DATABASE_URL, { max: 2, onnotice: () => {} });
const kafka = new Kafka({
  clientId: uniqueName("npm-start-test"),
  brokers: urls.KAFKA_BROKERS.split(","),
  logLevel: logLevel.NOTHING,
});
const alias = uniqueName("npm-start-listings");
const groups = {
  media: uniqueName("npm-start-media"),
  indexer: uniqueName("npm-start-indexer"),
  leads: uniqueName("npm-start-leads"),
  webhooks: uniqueName("npm-start-webhooks"),
};

let images: ImageServer;
let chromium: ChromiumSession | undefined;
let start: Bun.Subprocess<"ignore", "pipe", "pipe"> | undefined;
const output: string[] = [];
const ports = {
  api: 0,
  apiBackend: 0,
  apiHealth: 0,
  marketplace: 0,
  marketplaceHealth: 0,
  media: 0,
  indexer: 0,
  leads: 0,
  webhooks: 0,
  portal: 0,
  portalHealth: 0,
};

async function until<T>(
  what: string,
  check: () => Promise<T | null | undefined | false>,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline)
      throw new Error(
        `${what}: not within ${timeoutMs / 1000} s. Last lines of start.ts:\n${output.slice(-30).join("\n")}`,
      );
    await Bun.sleep(250);
  }
}

async function collect(stream: ReadableStream<Uint8Array>) {
  const decoder = new TextDecoder();
  let rest = "";
  for await (const chunk of stream) {
    rest += decoder.decode(chunk, { stream: true });
    const lines = rest.split("\n");
    rest = lines.pop()!;
    output.push(...lines);
  }
  if (rest) output.push(rest);
}

/** Live processes whose parent is `pid`, and theirs, from /proc (zombies count as gone). */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (!stat || stat.state === "Z") continue;
    children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length) for (const child of children.get(queue.shift()!) ?? []) found.push(child), queue.push(child);
  return found;
}

function readStat(pid: number): { state: string; ppid: number } | null {
  try {
    // "<pid> (<comm>) <state> <ppid> …": comm may contain spaces and parentheses, so split after the last ')'.
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const [state, ppid] = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: state!, ppid: Number(ppid) };
  } catch {
    return null;
  }
}

const alive = (pid: number) => {
  const stat = readStat(pid);
  return stat !== null && stat.state !== "Z";
};

/** What the page's <img> elements tell (the tests typecheck without the DOM library). */
type LoadedImage = { complete: boolean; naturalWidth: number; currentSrc: string };

const answers = (port: number) =>
  fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
    () => true,
    () => false,
  );

beforeAll(async () => {
  images = await startImageServer();
  await ensureTopics(kafka, topicSpecs());
  // Each group starts at the topics' end: it handles what this test publishes, not other tests' backlog.
  await Promise.all([
    startGroupAtEnd(kafka, groups.media, [Topics.listingEvents.name, Topics.brokerEvents.name]),
    startGroupAtEnd(kafka, groups.indexer, [Topics.listingEvents.name, Topics.brokerEvents.name]),
    startGroupAtEnd(kafka, `${groups.leads}-counter`, [Topics.leadEvents.name]),
    startGroupAtEnd(kafka, `${groups.leads}-mailer`, [Topics.leadEvents.name]),
    startGroupAtEnd(kafka, groups.webhooks, [Topics.partnerEvents.name]),
    startGroupAtEnd(kafka, `${groups.webhooks}-reports`, [
      Topics.listingEvents.name,
      Topics.brokerEvents.name,
      Topics.partnerEvents.name,
    ]),
  ]);
  for (const key of Object.keys(ports) as (keyof typeof ports)[]) ports[key] = await freePort();
}, 60_000);

afterAll(async () => {
  if (start && start.exitCode === null) {
    for (const pid of descendants(start.pid)) process.kill(pid, "SIGKILL");
    start.kill("SIGKILL");
  }
  await chromium?.close();
  images?.stop();
  for (const key of await s3.list({ prefix: s3Prefix }).then(
    (l) => (l.contents ?? []).map((o) => o.key),
    () => [] as string[],
  ))
    await s3.delete(key).catch(() => {});
  const { Client } = await import("@opensearch-project/opensearch");
  const os = new Client({ node: urls.OPENSEARCH_URL });
  await os.indices.delete({ index: `${alias}-v*` }).catch(() => {});
  await os.close();
  await sql.end({ timeout: 5 });
}, 60_000);

test("npm start stores a listing's photo variants in the S3 server, a browser shows them, and SIGTERM stops every process", async () => {
  const apiBase = `http://127.0.0.1:${ports.api}`;
  const publicBase = `http://${PUBLIC_HOST}:${ports.api}`;
  const env: Record<string, string | undefined> = {
    ...process.env,
    ...urls,
    ...s3Env,
    S3_PREFIX: s3Prefix,
    MEDIA_STORAGE: undefined, // start.ts's default (s3) is what this test is about
    MEDIA_DIR: undefined,
    API_PORT: String(ports.api),
    API_HEALTH_PORT: String(ports.apiHealth),
    API_BACKEND_PORT: String(ports.apiBackend),
    MARKETPLACE_PORT: String(ports.marketplace),
    MARKETPLACE_HEALTH_PORT: String(ports.marketplaceHealth),
    MEDIA_HEALTH_PORT: String(ports.media),
    INDEXER_HEALTH_PORT: String(ports.indexer),
    LEADS_HEALTH_PORT: String(ports.leads),
    WEBHOOKS_HEALTH_PORT: String(ports.webhooks),
    PORTAL_PORT: String(ports.portal),
    PORTAL_HEALTH_PORT: String(ports.portalHealth),
    PUBLIC_BASE_URL: publicBase,
    MEDIA_ALLOWED_HOSTS: `127.0.0.1:${images.port}`,
    MEDIA_CONSUMER_GROUP: groups.media,
    MEDIA_GC_INTERVAL_MS: "0",
    INDEXER_GROUP_ID: groups.indexer,
    RECONCILE_INTERVAL_MS: "0",
    LEADS_GROUP_PREFIX: groups.leads,
    WEBHOOKS_CONSUMER_GROUP: groups.webhooks,
    REPORT_TRACKER_CONSUMER_GROUP: `${groups.webhooks}-reports`,
    OPENSEARCH_INDEX_ALIAS: alias,
    LOG_LEVEL: "warn",
    // No trace store: start.ts would start the local Zipkin (infrastructure, which outlives it by design) wherever
    // none answers on its port, as on a clean CI machine, and this test starts no infrastructure.
    PSS_ZIPKIN: "0",
  };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  start = Bun.spawn([process.execPath, join(ROOT, "scripts", "start.ts")], {
    cwd: ROOT,
    env: env as Record<string, string>,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  void collect(start.stdout);
  void collect(start.stderr);

  // --- start.ts reports every service ready, having started no infrastructure of its own ------------------------
  await until(
    "start.ts to report every service ready",
    async () => output.some((l) => l.startsWith("start: all services ready")),
    45_000,
  );
  expect(start.exitCode).toBeNull();
  expect(output.filter((l) => /^start: .*exited with code/.test(l))).toEqual([]);
  expect(output.find((l) => l.startsWith("start: all services ready"))).not.toContain("traces:");
  for (const port of Object.values(ports)) expect([port, await answers(port)]).toEqual([port, true]);
  // The partner portal answers at /portal/ of the one address (the local balancer sends it there), and on its own port.
  for (const base of [apiBase, `http://127.0.0.1:${ports.portal}`]) {
    const signIn = await fetch(`${base}/portal/sign-in`);
    expect([base, signIn.status]).toEqual([base, 200]);
    expect(await signIn.text()).toContain("Sign in to the partner portal");
  }

  // --- a partner PUTs a broker and a listing with two photos from the image host ---------------------------------
  const redis = new Redis(urls.REDIS_URL, { lazyConnect: true });
  const partner = await createPartnerAdmin({ sql, redis }).createPartner({
    name: uniqueName("npm-start-partner"),
    leadTracking: false,
  });
  redis.disconnect();
  const put = (path: string, body: unknown) =>
    fetch(apiBase + path, {
      method: "PUT",
      headers: { authorization: `Bearer ${partner.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const brokerId = uniqueName("broker");
  expect((await put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
  const listingRes = await put(
    `/partner/v1/listings/${uniqueName("listing")}`,
    sample.listing(brokerId, {
      title: "Corner bakery started by npm start",
      photos: [
        { url: images.url("/photo.jpg"), sortKey: 1 },
        { url: images.url("/photo-2.jpg"), sortKey: 2 },
      ],
    }),
  );
  expect(listingRes.status).toBe(201);
  const listingId = ((await listingRes.json()) as { serviceListingId: number }).serviceListingId;

  const photos = await until(
    "both photos to be ready",
    async () => {
      const rows = await sql<
        { state: string; variants: { key?: string }[] }[]
      >`SELECT state, variants FROM listing_photos WHERE listing_id = ${listingId}`;
      return rows.length === 2 && rows.every((r) => r.state === "ready") ? rows : null;
    },
    30_000,
  );

  // --- the variants are objects in the S3 server, and not files in the local media directory ---------------------
  const names = photos.flatMap((p) => p.variants.map((v) => v.key));
  expect(names.length).toBeGreaterThanOrEqual(2);
  expect(names.every((n) => typeof n === "string")).toBe(true);
  const listed = new Set(((await s3.list({ prefix: s3Prefix, maxKeys: 1000 })).contents ?? []).map((o) => o.key));
  for (const name of names as string[]) {
    const key = `${s3Prefix}${mediaRelativePath(name)}`;
    expect([key, listed.has(key), await s3.exists(key)]).toEqual([key, true, true]);
    expect([name, existsSync(join(ROOT, ".data", "media", mediaRelativePath(name)))]).toEqual([name, false]);
  }

  // --- the buyer's listing page shows both photos in Chromium ------------------------------------------------------
  chromium = await launchChromium({ hosts: { [PUBLIC_HOST]: "127.0.0.1" } });
  const context = await chromium.newContext();
  const page = await context.newPage();
  const responses: BrowserResponse[] = [];
  page.on("response", (r) => void responses.push(r));
  const pageRes = await page.goto(`${publicBase}/listings/${listingId}`);
  expect(pageRes!.status()).toBe(200);
  const photoImages = page.locator(".gallery img");
  expect(await photoImages.count()).toBe(2);
  for (const img of await photoImages.all()) {
    await img.scrollIntoViewIfNeeded(); // the second photo loads lazily
    await until(
      "a photo to load",
      () =>
        img.evaluate((el) => {
          const i = el as unknown as LoadedImage;
          return i.complete && i.naturalWidth > 0;
        }),
      15_000,
    );
  }
  const loaded = await photoImages.evaluateAll((els) =>
    (els as unknown as LoadedImage[]).map((el) => ({ src: el.currentSrc, width: el.naturalWidth })),
  );
  for (const { src, width } of loaded) {
    expect(width).toBeGreaterThan(0);
    // Served by the API (MEDIA_DELIVERY=api, the default) or, behind a redirect, by the S3 server: 200 at the end.
    expect(src.startsWith(`${publicBase}/media/`) || src.startsWith(s3Env.S3_ENDPOINT)).toBe(true);
    let res = responses.find((r) => r.url() === src);
    expect([src, res !== undefined]).toEqual([src, true]);
    for (let hops = 0; res && res.status() >= 300 && res.status() < 400 && hops < 5; hops++)
      res = (await res.request().redirectedTo()?.response()) ?? undefined;
    expect([src, res?.status()]).toEqual([src, 200]);
    expect(names.some((n) => src.includes(n as string))).toBe(true);
  }
  await context.close();

  // --- SIGTERM stops start.ts and everything under it, and the ports go quiet ----------------------------------------
  const tree = descendants(start.pid);
  expect(tree.length).toBeGreaterThanOrEqual(6); // the six services (the API adds workers)
  start.kill("SIGTERM");
  const code = await Promise.race([start.exited, Bun.sleep(35_000).then(() => "still running")]);
  expect(code).toBe(0);
  expect(output.some((l) => l.startsWith("start: services stopped"))).toBe(true);
  // Every service stopped on SIGTERM within the supervisor's grace time: none had to be killed.
  expect(output.filter((l) => l.includes("killing them"))).toEqual([]);
  await until("every process start.ts ran to exit", async () => tree.every((pid) => !alive(pid)), 10_000);
  for (const port of Object.values(ports)) expect([port, await answers(port)]).toEqual([port, false]);
}, 90_000);
