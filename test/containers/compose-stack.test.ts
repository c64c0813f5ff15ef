// Issue 21: the compose stack for real, on a Docker engine, with the images `npm run images` built. One project of
// its own (own containers, network, volumes; host ports picked free) goes through what an operator does with it:
//
// 1. `docker compose up -d --wait` (infrastructure, the one-shot migration, API, marketplace, outbox relay, media,
//    indexer, leads, webhooks, portal, SMTP sink) and a partner and a buyer use it: a listing with photos is searchable, its variants
//    are in the object store, a webhook reaches a receiver, a lead reaches the SMTP sink; a person the partner invited
//    signs in to the portal behind the balancer by the e-mailed link and sees the listing.
// 2. It scales (media=3, indexer=2, leads=2, webhooks=2, and api=2 behind the compose balancer), takes writes
//    at a steady rate, loses one media and one indexer container to `docker kill` and has Redis restarted mid-load;
//    every acknowledged write is searchable, every photo is processed, every webhook and lead delivered: 0 lost,
//    0 duplicated.
// 3. Issue 41: the marketplace scaled to 3 apart from the API, under a steady buyer load (search, listing pages,
//    inquiries with an Idempotency-Key retried until answered) while a partner writes; one marketplace container is
//    killed: 0 failed buyer GETs (the balancer re-sends an idempotent request that reached no answer), as many leads
//    stored and e-mailed as 2xx answers (never a POST twice; a retry after a lost answer gets the first answer), and
//    the partner's PUT p99 with and without the buyer load, reported; a client's own X-Forwarded-For changes nothing.
// 4. Each app container stops gracefully on SIGTERM within its compose stop grace period (measured), and
//    `docker compose down` (volumes kept) then `up` keeps every acknowledged write.
//
// The photo host and the webhook receiver are this test process, reached from the containers as
// host.docker.internal. The timings are printed (docs/operations.md, "Containers", records them).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { makePicture } from "../../services/media/test/support/image-server.ts";
import { sample } from "../../services/api/test/support/harness.ts";
import { createPortalClient } from "../../services/portal/test/support/portal-harness.ts";
import { parseMessage } from "../../services/leads/test/support/smtp-sink.ts";
import {
  composeProject,
  containerTestsUnavailable,
  must,
  run,
  type ComposeProject,
} from "./support/compose-project.ts";
import { freePort } from "../support/ports.ts";
import { until } from "../support/until.ts";

const unavailable = await containerTestsUnavailable();
if (unavailable) console.error(`compose stack tests skipped: ${unavailable}`);
const it = unavailable ? test.skip : test;

const APP_SERVICES = ["api", "marketplace", "outbox-relay", "media", "indexer", "leads", "webhooks", "portal"] as const;
const GRACE_S: Record<(typeof APP_SERVICES)[number], number> = {
  api: 30,
  marketplace: 30,
  "outbox-relay": 30,
  media: 40,
  indexer: 30,
  leads: 30,
  webhooks: 35,
  portal: 30,
};
const token = `cz${crypto.randomUUID().replace(/-/g, "").slice(0, 10)}`;
const timings: Record<string, number> = {};

// --- this process: photo host, webhook receiver -------------------------------------------------------------------
const pictures: Buffer[] = [];
const photoHits = new Map<string, number>();
interface Delivery {
  id: string;
  type: string;
  listing: number;
}
const deliveries: Delivery[] = [];
let photoHost: ReturnType<typeof Bun.serve> | undefined;
let receiver: ReturnType<typeof Bun.serve> | undefined;
/** The balancer's published port (the stack's one public port). */
let apiPort = 0;
/** Answers per API instance, as the balancer names the one that served each (X-Pss-Instance). */
const served = new Map<string, number>();
let project: ComposeProject | undefined;
let partner = { apiKey: "", partnerId: "" };
const brokerEmail = `leads-${token}@broker.example`;
const brokerId = `broker-${token}`;

const seconds = (t0: number) => Math.round((Date.now() - t0) / 100) / 10;

function api(path: string, init: RequestInit & { key?: string } = {}): Promise<Response> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    ...(init.key ? { authorization: `Bearer ${init.key}` } : {}),
  };
  return fetch(`http://127.0.0.1:${apiPort}${path}`, { ...init, headers, signal: AbortSignal.timeout(15_000) }).then(
    (res) => {
      const instance = res.headers.get("x-pss-instance");
      if (instance) served.set(instance, (served.get(instance) ?? 0) + 1);
      return res;
    },
  );
}

async function putListing(externalId: string, title: string, photos: string[]): Promise<number | null> {
  const res = await api(`/partner/v1/listings/${externalId}`, {
    method: "PUT",
    key: partner.apiKey,
    body: JSON.stringify(
      sample.listing(brokerId, {
        title,
        photos: photos.map((p, i) => ({
          url: `http://host.docker.internal:${photoHost!.port}/${p}.jpg`,
          sortKey: i + 1,
        })),
      }),
    ),
  }).catch(() => null);
  if (res?.status !== 201) return null;
  return ((await res.json()) as { serviceListingId: number }).serviceListingId;
}

async function searchable(word: string, id: number): Promise<boolean> {
  const res = await api(`/v1/listings?q=${encodeURIComponent(word)}`);
  if (res.status !== 200) return false;
  const body = (await res.json()) as { results: { serviceListingId: number }[] };
  return body.results.some((r) => r.serviceListingId === id);
}

/** The SMTP sink's memory: the newest 5,000 messages (docker-compose.yml's MP_MAX_MESSAGES). */
const SINK_KEEPS = 5000;

async function sinkMessages(): Promise<
  { ID: string; MessageID: string; To: { Address: string }[]; Subject: string }[]
> {
  const res = await fetch(`http://127.0.0.1:${project!.env.PSS_SMTP_UI_PORT}/api/v1/messages`, {
    signal: AbortSignal.timeout(5_000),
  });
  return (
    (await res.json()) as { messages: { ID: string; MessageID: string; To: { Address: string }[]; Subject: string }[] }
  ).messages;
}

async function sendLead(listingId: number, n: number): Promise<boolean> {
  const res = await api(`/v1/listings/${listingId}/leads`, {
    method: "POST",
    body: JSON.stringify({ name: `Buyer ${n}`, email: `buyer${n}@example.com`, message: `Lead ${n} for ${token}` }),
  }).catch(() => null);
  return res?.status === 202;
}

beforeAll(async () => {
  if (unavailable) return;
  for (let i = 0; i < 8; i++)
    pictures.push(await makePicture(640, 480, "jpeg", { colour: { r: 30 * i, g: 255 - 30 * i, b: (90 * i) % 256 } }));
  photoHost = Bun.serve({
    hostname: "0.0.0.0",
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      photoHits.set(path, (photoHits.get(path) ?? 0) + 1);
      const n = Number(/(\d+)\.jpg$/.exec(path)?.[1] ?? 0);
      return new Response(pictures[n % pictures.length], { headers: { "content-type": "image/jpeg" } });
    },
  });
  receiver = Bun.serve({
    hostname: "0.0.0.0",
    port: 0,
    async fetch(req) {
      const body = (await req.json().catch(() => ({}))) as { type?: string; data?: { serviceListingId?: number } };
      deliveries.push({
        id: req.headers.get("webhook-id") ?? "",
        type: body.type ?? "",
        listing: Number(body.data?.serviceListingId ?? 0),
      });
      return new Response(null, { status: 204 });
    },
  });
  apiPort = await freePort();
  project = composeProject({
    prefix: "pss-compose-test",
    apiPorts: `127.0.0.1:${apiPort}`,
    smtpUiPort: await freePort(),
    hostPorts: { photos: photoHost.port!, receiver: receiver.port! },
  });
}, 60_000);

afterAll(async () => {
  if (unavailable) return;
  const t0 = Date.now();
  await project?.down();
  timings.down = seconds(t0);
  photoHost?.stop(true);
  receiver?.stop(true);
  console.error(`compose stack timings (s): ${JSON.stringify(timings)}`);
}, 180_000);

it("docker compose up -d --wait brings the whole stack up; a partner's listing with photos becomes searchable, its variants are in the object store, a webhook and a lead are delivered", async () => {
  const p = project!;
  let t0 = Date.now();
  await p.compose(["up", "-d", "--wait", "--wait-timeout", "300"], 360_000);
  timings.up = seconds(t0);
  for (const service of [...APP_SERVICES, "postgres", "redis", "kafka", "opensearch", "s3", "smtp-sink"])
    expect([service, (await p.containers(service)).length]).toEqual([service, 1]);
  // The one-shot migration ran to completion (exit 0) before the services started.
  expect((await p.compose(["ps", "-a", "--format", "{{.Service}} {{.ExitCode}}", "migrate"])).trim()).toBe("migrate 0");

  // --- the services run as a non-root user on a read-only root filesystem -----------------------------------------
  const [apiContainer] = await p.containers("api");
  expect((await must(["docker", "exec", apiContainer!, "id", "-u"])).trim()).toBe("1000");
  const write = await Bun.spawn(["docker", "exec", apiContainer!, "sh", "-c", "touch /app/probe"], {
    stdout: "ignore",
    stderr: "pipe",
  });
  expect(await write.exited).not.toBe(0);
  expect(await new Response(write.stderr).text()).toContain("Read-only file system");

  // --- an operator creates the first partner and its key in one documented command (the admin service) ----------
  partner = JSON.parse(
    await p.compose([
      "run",
      "--rm",
      "-T",
      "admin",
      "partners",
      "create",
      "--name",
      `Compose ${token}`,
      "--lead-tracking",
      "--json",
    ]),
  );
  expect(partner.apiKey).toStartWith("pss_live_");

  t0 = Date.now();
  const endpoint = await api(`/partner/v1/webhook-endpoints/hooks-${token}`, {
    method: "PUT",
    key: partner.apiKey,
    body: JSON.stringify({
      url: `http://host.docker.internal:${receiver!.port}/hooks`,
      events: ["listing.published", "listing.media.processed", "lead.received"],
    }),
  });
  expect(endpoint.status).toBe(201);
  expect(
    (
      await api(`/partner/v1/brokers/${brokerId}`, {
        method: "PUT",
        key: partner.apiKey,
        body: JSON.stringify(sample.broker({ forwardingEmail: brokerEmail })),
      })
    ).status,
  ).toBe(201);
  const id = await putListing(`first-${token}`, `Corner bakery ${token}first`, ["first-1", "first-2"]);
  expect(id).not.toBeNull();

  // --- searchable, photos ready with their variants in the object store ---------------------------------------------
  await until("the listing to be searchable", () => searchable(`${token}first`, id!), 90_000);
  const rows = await until(
    "both photos to be ready",
    async () => {
      const r = await p.sql(`SELECT state, variants::text FROM listing_photos WHERE listing_id = ${id}`);
      return r.length === 2 && r.every(([state]) => state === "ready") ? r : null;
    },
    90_000,
  );
  const names = rows.flatMap(([, variants]) => (JSON.parse(variants!) as { key: string }[]).map((v) => v.key));
  expect(names.length).toBeGreaterThanOrEqual(2);
  const stored = new Set(
    (await p.compose(["exec", "-T", "s3", "find", "/data/pss-media", "-type", "f"]))
      .split("\n")
      .map((f) => f.split("/").pop()),
  );
  for (const name of names) expect([name, stored.has(name)]).toEqual([name, true]);
  // The API serves a variant from the object store.
  const variant = await api(`/media/${names[0]}`);
  expect(variant.status).toBe(200);
  expect((await variant.arrayBuffer()).byteLength).toBeGreaterThan(100);

  // --- a webhook reaches the receiver; a buyer's lead reaches the SMTP sink -------------------------------------------
  await until(
    "the listing.published webhook",
    async () => deliveries.some((d) => d.type === "listing.published" && d.listing === id),
    60_000,
  );
  expect(await sendLead(id!, 0)).toBe(true);
  const mail = await until(
    "the lead's e-mail in the SMTP sink",
    async () => (await sinkMessages()).find((m) => m.To.some((t) => t.Address === brokerEmail)),
    60_000,
  );
  expect(mail.Subject.length).toBeGreaterThan(0);
  timings.firstListingJourney = seconds(t0);
}, 600_000);

/** A message's plain text from the SMTP sink (its raw form, as Mailpit's API and the built sink both serve it). */
async function sinkText(id: string): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${project!.env.PSS_SMTP_UI_PORT}/api/v1/message/${id}/raw`, {
    signal: AbortSignal.timeout(5_000),
  });
  return parseMessage(await res.text()).text ?? "";
}

it("the partner portal behind the balancer: a person the partner invites gets the invitation, signs in by the e-mailed link and sees the listing's page", async () => {
  const p = project!;
  expect(partner.apiKey).not.toBe(""); // the first test made the partner and the listing
  const t0 = Date.now();
  const email = `staff-${token}@brokerage.example`;
  const invited = await api(`/partner/v1/portal-users/${encodeURIComponent(email)}`, {
    method: "PUT",
    key: partner.apiKey,
    body: JSON.stringify({ leadAccess: true }),
  });
  expect(invited.status).toBe(201);
  const toHer = async () => (await sinkMessages()).filter((m) => m.To.some((t) => t.Address === email));
  await until("the invitation e-mail", async () => (await toHer()).length >= 1, 60_000);

  // The balancer sends /portal/ to the portal: its sign-in page, then the link e-mailed to her.
  const client = createPortalClient(`http://127.0.0.1:${apiPort}`);
  const asked = await client.requestLink(email);
  expect(asked.status).toBe(200);
  const linkMail = await until(
    "the sign-in link's e-mail",
    async () => (await toHer()).find((m) => /sign-in link/i.test(m.Subject)),
    60_000,
  );
  // The link names PUBLIC_BASE_URL's host; the path is what the balancer routes.
  const link = /https?:\/\/[^\s/]+(\/portal\/sign-in\/[A-Za-z0-9_-]{43})/.exec(await sinkText(linkMail.ID));
  expect(link).not.toBeNull();
  const opened = await client.get(link![1]!);
  expect(opened.status).toBe(303);
  expect(client.cookies.has("pss_portal_session")).toBe(true);

  const page = await client.get(`/portal/live/listings/first-${token}`);
  expect(page.status).toBe(200);
  expect(page.text).toContain(`Corner bakery ${token}first`);
  const overview = await client.get("/portal/live");
  expect(overview.status).toBe(200);
  expect(overview.text).toContain(email);
  // Without the session the same page is not shown: the sign-in page instead.
  const stranger = await createPortalClient(`http://127.0.0.1:${apiPort}`).get(`/portal/live/listings/first-${token}`);
  expect([stranger.status, stranger.location]).toEqual([303, "/portal/sign-in"]);
  expect((await p.containers("portal")).length).toBe(1);
  timings.portalSignIn = seconds(t0);
}, 180_000);

it("a container with a bad environment value exits at once listing the problems; one that cannot reach a dependency at boot waits and retries", async () => {
  const p = project!;
  // Two bad values: both are reported, and the container exits 1 within seconds (no retry loop on configuration).
  let t0 = Date.now();
  const bad = await p.run([
    "run",
    "--rm",
    "--no-deps",
    "-e",
    "HEALTH_PORT=not-a-port",
    "-e",
    "KAFKA_BROKERS=",
    "indexer",
  ]);
  expect(bad.code).toBe(1);
  expect(Date.now() - t0).toBeLessThan(30_000);
  const said = bad.out + bad.err;
  expect(said).toContain("invalid configuration");
  expect(said).toContain("HEALTH_PORT");
  expect(said).toContain("KAFKA_BROKERS");

  // Kafka at an address nobody answers: the indexer keeps running (not ready, never restarted) and says it retries.
  t0 = Date.now();
  const name = `${p.name}-unreachable`;
  await p.compose(["run", "-d", "--no-deps", "--name", name, "-e", "KAFKA_BROKERS=nowhere.invalid:9092", "indexer"]);
  try {
    await Bun.sleep(15_000);
    const state = JSON.parse(await must(["docker", "inspect", "--format", "{{json .State}}", name])) as {
      Running: boolean;
      Restarting: boolean;
    };
    expect([state.Running, state.Restarting]).toEqual([true, false]);
    // It keeps trying (kafkajs's connection retries, then the service's own boot retry), it does not exit.
    const logs = await run(["docker", "logs", name]);
    expect(((logs.out + logs.err).match(/nowhere\.invalid/g) ?? []).length).toBeGreaterThanOrEqual(3);
  } finally {
    await must(["docker", "rm", "-f", name]).catch(() => {});
  }
  timings.bootFaults = seconds(t0);
}, 120_000);

it("scaled out (media=3, indexer=2, leads=2, webhooks=2, api=2), with one media and one indexer container killed and Redis restarted mid-load: 0 acknowledged writes lost, 0 effects duplicated", async () => {
  const p = project!;
  expect(partner.apiKey).not.toBe(""); // the first test made the partner
  let t0 = Date.now();
  await p.compose(
    [
      "up",
      "-d",
      "--wait",
      "--wait-timeout",
      "300",
      "--scale",
      "media=3",
      "--scale",
      "indexer=2",
      "--scale",
      "leads=2",
      "--scale",
      "webhooks=2",
      "--scale",
      "api=2",
    ],
    360_000,
  );
  timings.scaleUp = seconds(t0);
  expect((await p.containers("media")).length).toBe(3);
  expect((await p.containers("indexer")).length).toBe(2);
  expect((await p.containers("api")).length).toBe(2);

  // --- steady writes through the balancer (a listing with two photos every 400 ms, a lead for every third) -------------
  t0 = Date.now();
  const acked: { id: number; word: string; n: number }[] = [];
  const leadsAcked: number[] = [];
  let attempted = 0;
  const writer = (async () => {
    for (let n = 1; Date.now() - t0 < 24_000; n++) {
      const tick = Date.now();
      attempted++;
      const word = `${token}n${n}`;
      const id = await putListing(`load-${token}-${n}`, `Steady listing ${word}`, [
        `load-${n}-a-${n % 8}`,
        `load-${n}-b-${(n + 3) % 8}`,
      ]);
      if (id !== null) {
        acked.push({ id, word, n });
        if (n % 3 === 0 && (await sendLead(id, n))) leadsAcked.push(id);
      }
      await Bun.sleep(Math.max(0, 400 - (Date.now() - tick)));
    }
  })();
  // --- faults mid-load ----------------------------------------------------------------------------------------------
  await Bun.sleep(6_000);
  const [media1] = await p.containers("media");
  const [indexer1] = await p.containers("indexer");
  await must(["docker", "kill", media1!, indexer1!]);
  await Bun.sleep(4_000);
  const [redis] = await p.containers("redis");
  await must(["docker", "restart", "-t", "10", redis!]);
  await writer;
  timings.load = seconds(t0);
  console.error(
    `scale test: ${acked.length} of ${attempted} listing writes acknowledged, ${leadsAcked.length} leads; answers per API instance ${JSON.stringify(Object.fromEntries(served))}`,
  );
  expect(acked.length).toBeGreaterThanOrEqual(Math.floor(attempted * 0.5));
  // Both API containers served requests through the one published port.
  expect(served.size).toBeGreaterThanOrEqual(2);

  // --- every acknowledged write converges -----------------------------------------------------------------------------
  t0 = Date.now();
  const ids = acked.map((a) => a.id);
  const idList = ids.join(",");
  await until(
    "every acknowledged listing's photos to be ready",
    async () => {
      const [[ready, total]] = (await p.sql(
        `SELECT count(*) FILTER (WHERE state = 'ready'), count(*) FROM listing_photos WHERE listing_id IN (${idList})`,
      )) as [[string, string]];
      return Number(ready) === ids.length * 2 && Number(total) === ids.length * 2;
    },
    240_000,
  );
  const missing = new Set(acked.map((a) => a.n));
  await until(
    "every acknowledged listing to be searchable",
    async () => {
      for (const a of acked) if (missing.has(a.n) && (await searchable(a.word, a.id))) missing.delete(a.n);
      return missing.size === 0;
    },
    240_000,
  );
  await until(
    "every listing.published and listing.media.processed webhook",
    async () =>
      ids.every(
        (id) =>
          deliveries.some((d) => d.listing === id && d.type === "listing.published") &&
          deliveries.some((d) => d.listing === id && d.type === "listing.media.processed"),
      ),
    240_000,
  );
  await until(
    "every lead's e-mail",
    async () =>
      (await sinkMessages()).filter((m) => m.To.some((t) => t.Address === brokerEmail)).length >= leadsAcked.length + 1,
    240_000,
  );
  timings.converge = seconds(t0);

  // --- 0 duplicated: one event per listing and type (retries carry the same webhook-id), one e-mail per lead --------
  await Bun.sleep(5_000); // late duplicates would arrive now
  for (const type of ["listing.published", "listing.media.processed"]) {
    const perListing = ids.map(
      (id) => new Set(deliveries.filter((d) => d.listing === id && d.type === type).map((d) => d.id)).size,
    );
    expect([type, perListing.filter((c) => c !== 1).length]).toEqual([type, 0]);
  }
  const mails = (await sinkMessages()).filter((m) => m.To.some((t) => t.Address === brokerEmail));
  expect(mails.length).toBe(leadsAcked.length + 1);
  expect(new Set(mails.map((m) => m.MessageID)).size).toBe(mails.length);
  // Every photo row once, ready, with its variants.
  const [[rowsTotal, distinctPhotos]] = (await p.sql(
    `SELECT count(*), count(DISTINCT (listing_id, sort_key)) FROM listing_photos WHERE listing_id IN (${idList})`,
  )) as [[string, string]];
  expect([Number(rowsTotal), Number(distinctPhotos)]).toEqual([ids.length * 2, ids.length * 2]);
}, 900_000);

/** The p-th percentile (0-100) of some durations, in ms. */
function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

it("marketplace=3 under buyer load while a partner writes, one marketplace container killed: 0 failed buyer GETs, every inquiry stored and e-mailed once, the partner's PUT p99 with and without buyers", async () => {
  const p = project!;
  expect(partner.apiKey).not.toBe(""); // the first test made the partner
  await p.compose(
    ["up", "-d", "--wait", "--wait-timeout", "300", "--scale", "marketplace=3", "--scale", "api=2"],
    360_000,
  );
  expect((await p.containers("marketplace")).length).toBe(3);
  served.clear(); // from here: which instances the balancer sent this test's requests to
  const email = `idempotent-${token}@broker.example`;
  const broker = `idem-broker-${token}`;
  expect(
    (
      await api(`/partner/v1/brokers/${broker}`, {
        method: "PUT",
        key: partner.apiKey,
        body: JSON.stringify(sample.broker({ forwardingEmail: email })),
      })
    ).status,
  ).toBe(201);
  const put = await api(`/partner/v1/listings/idem-${token}`, {
    method: "PUT",
    key: partner.apiKey,
    body: JSON.stringify(sample.listing(broker, { title: `Idempotent bakery ${token}` })),
  });
  expect(put.status).toBe(201);
  const listingId = ((await put.json()) as { serviceListingId: number }).serviceListingId;
  await until("the listing to be searchable", () => searchable(`bakery ${token}`, listingId), 120_000);

  // --- a forged X-Forwarded-For through the balancer: 12 views claiming 12 addresses are one address's (3) --------
  for (let i = 0; i < 12; i++) {
    const res = await fetch(`http://127.0.0.1:${apiPort}/listings/${listingId}`, {
      headers: {
        "user-agent": `Mozilla/5.0 (X11; Linux x86_64) Firefox/128.${i}`,
        "x-forwarded-for": `203.0.113.${i + 1}`,
      },
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  }
  // Counted before any container is killed (a killed instance loses the views it had not flushed yet).
  const views = async () =>
    (
      (await (await api(`/partner/v1/listings/idem-${token}/stats`, { key: partner.apiKey })).json()) as {
        totals: { views: number };
      }
    ).totals.views;
  await until("the views to be counted", async () => (await views()) > 0, 30_000);
  await Bun.sleep(3_000);
  expect(await views()).toBe(3);

  // --- the partner's writes: a PUT every 100 ms, timed ------------------------------------------------------------
  const partnerWrites = async (label: string, ms: number): Promise<number[]> => {
    const took: number[] = [];
    const stopAt = Date.now() + ms;
    for (let n = 0; Date.now() < stopAt; n++) {
      const t = performance.now();
      const res = await api(`/partner/v1/listings/pw-${token}-${label}-${n % 20}`, {
        method: "PUT",
        key: partner.apiKey,
        body: JSON.stringify(sample.listing(broker, { title: `Partner write ${n} ${token}`, photos: [] })),
      });
      expect([label, res.status < 300]).toEqual([label, true]);
      await res.arrayBuffer();
      took.push(performance.now() - t);
      await Bun.sleep(Math.max(0, 100 - (performance.now() - t)));
    }
    return took;
  };
  const quiet1 = await partnerWrites("quiet1", 12_000);
  const quiet2 = await partnerWrites("quiet2", 12_000);

  // --- buyers: search, listing pages and inquiries, while the partner writes and a marketplace container dies -------
  let buying = true;
  const getFailures: string[] = [];
  let gets = 0;
  const byInstance = new Map<string, number>();
  const browse = async (b: number) => {
    for (let i = 0; buying; i++) {
      const path =
        i % 3 === 0
          ? `/v1/listings?q=${encodeURIComponent(`bakery ${token}`)}&near=${encodeURIComponent("Austin, TX")}`
          : i % 3 === 1
            ? `/listings/${listingId}`
            : `/listings?businessType=Restaurant&sort=newest&page=${1 + (i % 2)}`;
      const res = await fetch(`http://127.0.0.1:${apiPort}${path}`, {
        headers: { "user-agent": `load-buyer-${b}` },
        signal: AbortSignal.timeout(15_000),
      }).catch((err: Error) => err);
      gets++;
      if (res instanceof Error || res.status !== 200)
        getFailures.push(
          res instanceof Error
            ? `${path}: ${res.message}`
            : `${path}: ${res.status} from ${res.headers.get("x-pss-instance") ?? "the balancer"} at ${Math.round((Date.now() - loadStart) / 100) / 10} s: ${(await res.text()).slice(0, 120)}`,
        );
      else {
        const instance = res.headers.get("x-pss-instance") ?? "?";
        byInstance.set(instance, (byInstance.get(instance) ?? 0) + 1);
        await res.arrayBuffer();
      }
      await Bun.sleep(50);
    }
  };
  let sentInquiries = 0;
  let answered = 0;
  let replayed = 0;
  let attempts = 0;
  const statuses = new Map<string, number>();
  const inquire = async () => {
    while (buying) {
      const n = sentInquiries++;
      const key = crypto.randomUUID();
      for (let attempt = 1; attempt <= 40; attempt++) {
        attempts++;
        const res = await fetch(`http://127.0.0.1:${apiPort}/v1/listings/${listingId}/leads`, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": key },
          body: JSON.stringify({ name: `Buyer ${n}`, email: `idem${n}@example.com`, message: `Inquiry ${n} ${token}` }),
          signal: AbortSignal.timeout(10_000),
        }).catch(() => null);
        const label = String(res?.status ?? "no answer");
        statuses.set(label, (statuses.get(label) ?? 0) + 1);
        if (res && res.status >= 200 && res.status < 300) {
          answered++;
          if (res.headers.get("idempotent-replayed") === "true") replayed++;
          break;
        }
        await res?.arrayBuffer().catch(() => {});
        await Bun.sleep(300);
      }
      await Bun.sleep(400);
    }
  };
  const loadStart = Date.now();
  let killedAt = Number.NaN;
  const buyers = [...Array.from({ length: 4 }, (_, b) => browse(b)), inquire(), inquire()];
  const killer = (async () => {
    await Bun.sleep(6_000);
    const [victim] = await p.containers("marketplace");
    await must(["docker", "kill", victim!]);
    killedAt = Math.round((Date.now() - loadStart) / 100) / 10;
    return victim!;
  })();
  const busy = await partnerWrites("busy", 24_000);
  buying = false;
  await Promise.all(buyers);
  const killed = await killer;
  await must(["docker", "start", killed]);

  const report = {
    putP99QuietMs: [Math.round(percentile(quiet1, 99)), Math.round(percentile(quiet2, 99))],
    putP99WithBuyersMs: Math.round(percentile(busy, 99)),
    putP50QuietMs: Math.round(percentile([...quiet1, ...quiet2], 50)),
    putP50WithBuyersMs: Math.round(percentile(busy, 50)),
    puts: { quiet: quiet1.length + quiet2.length, withBuyers: busy.length },
    buyerGets: gets,
    getFailures: getFailures.length,
    getsPerMarketplace: Object.fromEntries(byInstance),
    killedAtSeconds: killedAt,
    servedBeforeLoad: Object.fromEntries(served),
    inquiries: { sent: sentInquiries, answered, replayed, attempts, statuses: Object.fromEntries(statuses) },
  };
  console.error(`marketplace scaling: ${JSON.stringify(report)}`);
  if (getFailures.length > 0)
    console.error(`failed buyer GETs:\n${getFailures.join("\n")}\n${await p.logs("balancer", 40)}`);
  expect(getFailures).toEqual([]);
  expect(gets).toBeGreaterThan(100);
  // The three marketplace containers served buyers; the API containers served no buyer page.
  expect([...byInstance.keys()].filter((i) => i.startsWith("marketplace")).length).toBeGreaterThanOrEqual(3);
  expect([...byInstance.keys()].filter((i) => !i.startsWith("marketplace"))).toEqual([]);
  expect(answered).toBe(sentInquiries);
  expect(sentInquiries).toBeLessThanOrEqual(SINK_KEEPS / 2); // the sink keeps them all, and the other tests' e-mails
  // The partner's PUT latency with and without buyers is reported above (every PUT must have succeeded: partnerWrites
  // checks each answer), not asserted: speed targets live in the benchmark (bench/scenarios/marketplace-search.ts,
  // docs/benchmarks.md), and on a host where every container shares the same two cores a timed assertion would
  // measure the host. Each PUT phase did run: the figures exist.
  expect(report.puts.quiet).toBeGreaterThan(100);
  expect(report.puts.withBuyers).toBeGreaterThan(50);

  // --- as many leads and e-mails as 2xx answers ----------------------------------------------------------------------
  const stored = async () => Number((await p.sql(`SELECT count(*) FROM leads WHERE listing_id = ${listingId}`))[0]![0]);
  const mails = async () => (await sinkMessages()).filter((m) => m.To.some((t) => t.Address === email));
  await until(
    "every inquiry's e-mail",
    async () => {
      const got = (await mails()).length;
      if (got < answered) throw new Error(`${got} of ${answered} e-mails in the sink`);
      return true;
    },
    180_000,
  );
  await Bun.sleep(5_000); // late duplicates would arrive now
  expect(await stored()).toBe(answered);
  const sent = await mails();
  expect(sent.length).toBe(answered);
  expect(new Set(sent.map((m) => m.MessageID)).size).toBe(answered);
}, 600_000);

it("each app container stops on SIGTERM within its stop grace period, and docker compose down (volumes kept) loses no acknowledged write", async () => {
  const p = project!;
  const [[before]] = (await p.sql(`SELECT count(*) FROM listings WHERE title LIKE '%${token}%'`)) as [[string]];
  expect(Number(before)).toBeGreaterThan(1);
  // --- graceful stop, measured per container --------------------------------------------------------------------------
  const stops: Record<string, number> = {};
  for (const service of APP_SERVICES) {
    const [container] = await p.containers(service);
    const t0 = Date.now();
    await must(["docker", "stop", "-t", String(GRACE_S[service]), container!]);
    stops[service] = seconds(t0);
    const state = JSON.parse(await must(["docker", "inspect", "--format", "{{json .State}}", container!])) as {
      ExitCode: number;
      OOMKilled: boolean;
    };
    // 137 would be the engine's SIGKILL at the end of the grace period: the process did not finish its shutdown.
    expect([service, state.ExitCode === 0 || state.ExitCode === 143]).toEqual([service, true]);
    expect([service, stops[service]! < GRACE_S[service]]).toEqual([service, true]);
  }
  timings.stopSeconds = Math.max(...Object.values(stops));
  console.error(`graceful stop per service (s): ${JSON.stringify(stops)}`);

  // --- down without -v, up again: the data is still there -----------------------------------------------------------
  let t0 = Date.now();
  await p.compose(["down", "-t", "30"], 180_000);
  t0 = Date.now();
  await p.compose(["up", "-d", "--wait", "--wait-timeout", "300"], 360_000);
  timings.upAgain = seconds(t0);
  const [[after]] = (await p.sql(`SELECT count(*) FROM listings WHERE title LIKE '%${token}%'`)) as [[string]];
  expect(Number(after)).toBe(Number(before));
  await until(
    "the first listing to be searchable after down and up",
    async () => {
      const res = await api(`/v1/listings?q=${token}first`);
      return res.status === 200 && ((await res.json()) as { results: unknown[] }).results.length === 1;
    },
    60_000,
  );
}, 600_000);
