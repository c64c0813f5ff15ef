// Upgrades without downtime (docs/upgrades.md, "How this is tested"): the previous release (the one
// releases/previous.json records by its commit of main: its own source and dependencies,
// test/upgrades/support/release.ts) and this checkout, each service a real process as
// deployed, on a database of the test's own. The previous release migrates the empty database, runs its six
// services and takes data through its API; then this checkout's migrations run under it, and the services are
// rolled one at a time in the documented order, the old one of each kind stopped gracefully once the new one is
// ready, all while a steady writer keeps PUTting listings (creates and updates). Every PUT must be answered 2xx,
// and afterwards everything acknowledged must be readable through the new API at its last version, in the change
// feed (consecutive numbers, every version), in search and as webhooks; the data the old release wrote too. The
// second test rolls back the same way (the previous release's services on the schema as it is) and checks the same
// through the previous release's API; it continues from the first.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client as OpenSearchClient } from "@opensearch-project/opensearch";
import { Kafka, logLevel } from "kafkajs";
import postgres from "postgres";
import { Topics } from "@pss/contracts";
import { loadMigrations, migrate } from "@pss/database";
import {
  freePort,
  guardLines,
  spawnService,
  type ServiceProcess,
} from "../../services/api/test/faults/support/fault-harness.ts";
import { startGroupsAtEnd } from "../support/consumer-groups.ts";
import { startReceiver, verified } from "../../services/webhooks/test/support/receiver.ts";
import { testUrls, uniqueName } from "../support/env.ts";
import { until } from "../support/until.ts";
import {
  composeServices,
  documentedRollOrder,
  materialiseRelease,
  previousRelease,
  ROOT,
  type Release,
} from "./support/release.ts";

// Never skipped: a clone without the release's commit fetches it, and where that fails the tests fail, saying why.
const RECORDED = previousRelease();
const PREVIOUS = RECORDED.version;

// docs/upgrades.md, "Upgrading", step 4: the services in the order they are rolled (the API last). Each release's
// docker-compose.yml says which script runs each of them.
const ROLL_ORDER = documentedRollOrder("upgrade");
// "Rolling back": the reverse, the outbox relay (the feed's numbering) last.
const ROLLBACK_ORDER = documentedRollOrder("rollback");
type Kind = string;
interface Source {
  name: string;
  root: string;
  bun: string;
  services: Record<Kind, string>;
}

const urls = testUrls();
const databaseName = `${new URL(urls.DATABASE_URL).pathname.slice(1)}_upgrade_${Math.random().toString(36).slice(2, 8)}`;
const dbUrl = (name: string) => Object.assign(new URL(urls.DATABASE_URL), { pathname: `/${name}` }).toString();
const server = postgres(dbUrl("postgres"), { max: 1, onnotice: () => {} });
const token = `upg${Math.random().toString(36).slice(2, 8)}`;
const alias = uniqueName("upgrade-listings");
const groups = {
  INDEXER_GROUP_ID: uniqueName("upgrade-indexer"),
  MEDIA_CONSUMER_GROUP: uniqueName("upgrade-media"),
  LEADS_GROUP_PREFIX: uniqueName("upgrade-leads"),
  WEBHOOKS_CONSUMER_GROUP: uniqueName("upgrade-webhooks"),
  REPORT_TRACKER_CONSUMER_GROUP: uniqueName("upgrade-reports"),
};
const mediaDir = mkdtempSync(join(tmpdir(), "pss-upgrade-media-"));
// The partner's webhook receiver, on loopback (allowed to the webhooks service of either release).
const receiver = startReceiver();

interface Running {
  kind: Kind;
  release: string;
  process: ServiceProcess;
  /** The public base URL (api and marketplace only). */
  baseUrl?: string;
}

let previous: Release;
const running: Running[] = [];
const stopped: { stopped: Running; exitCode: number }[] = [];

/** One service of one release, as compose runs it (docker-compose.yml): same groups, alias and storage for both. */
async function start(kind: Kind, from: Source): Promise<Running> {
  const healthPort = await freePort();
  const env: Record<string, string> = {
    ...groups,
    DATABASE_URL: dbUrl(databaseName),
    OPENSEARCH_INDEX_ALIAS: alias,
    MEDIA_DIR: mediaDir,
    HEALTH_PORT: String(healthPort),
    WEBHOOK_ALLOWED_HOSTS: receiver.hostPort,
  };
  let baseUrl: string | undefined;
  if (kind === "api") {
    const port = await freePort();
    Object.assign(env, {
      API_PORT: String(port),
      API_HEALTH_PORT: String(healthPort),
      OUTBOX_RELAY_ENABLED: "false",
      // Every test's leads come from 127.0.0.1, counted in the shared Redis: no per-address limit here.
      LEAD_RATE_LIMIT_PER_ADDRESS: "0",
    });
    baseUrl = `http://127.0.0.1:${port}`;
  }
  if (kind === "marketplace") {
    const port = await freePort();
    Object.assign(env, { MARKETPLACE_PORT: String(port), LEAD_RATE_LIMIT_PER_ADDRESS: "0" });
    baseUrl = `http://127.0.0.1:${port}`;
  }
  // The partner portal serves its pages on a port of its own (8090 by default: taken by another run).
  if (kind === "portal") env.PORTAL_PORT = String(await freePort());
  const proc = await spawnService(`${kind} (${from.name})`, env, healthPort, from.services[kind], from);
  const ready = `http://127.0.0.1:${healthPort}/readyz`;
  await until(`${kind} of ${from.name} to be ready`, async () => (await fetch(ready)).ok, 45_000, 200);
  const r: Running = { kind, release: from.name, process: proc, baseUrl };
  running.push(r);
  return r;
}

/** A graceful stop (SIGTERM), as a rolling upgrade stops a container. */
async function stop(r: Running): Promise<void> {
  running.splice(running.indexOf(r), 1);
  const exitCode = await r.process.stop();
  stopped.push({ stopped: r, exitCode });
}

const current = (): Source => ({
  name: "current",
  root: ROOT,
  bun: process.execPath,
  services: composeServices(ROOT),
});
const old = (): Source => ({
  name: PREVIOUS,
  root: previous.dir,
  bun: previous.bun,
  services: composeServices(previous.dir),
});

// The API instances taking requests: the test's writer stands in for the balancer in front of them
// (docs/operations.md, "Load-balanced API"), which sends requests to the ready instances only and takes an
// instance out of rotation before it stops.
const rotation: string[] = [];
let turn = 0;
const nextApi = () => rotation[turn++ % rotation.length]!;
/**
 * Where the balancer sends buyers: a marketplace once one runs (a release with the marketplace), else the API (a
 * release without it served buyers itself). docs/upgrades.md starts the marketplace before the API is rolled.
 */
const buyerBase = () =>
  (running.find((r) => r.kind === "marketplace") ?? running.find((r) => r.kind === "api"))!.baseUrl!;

interface Answer {
  externalId: string;
  title: string;
  via: string;
  status: number;
  body: string;
}

const listingBody = (brokerExternalId: string, title: string) => ({
  brokerExternalId,
  status: "FOR_SALE",
  businessType: "Restaurant",
  title,
  description: `Written during a rolling upgrade ${token}.`,
  location: { city: "Austin", state: "TX", country: "US", visibility: "SHOW_CITY_STATE" },
  financials: { askingPrice: 450000 },
  photos: [],
});

/** A request with a partner's key (null: a buyer's, without one); the answer's status, text and JSON. */
async function send(method: string, baseUrl: string, path: string, key: string | null, body?: unknown) {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, text, body: json };
}

/**
 * The steady writer: `lanes` sequential writers, together `perSecond` PUTs a second, each moving to a new listing
 * every 6 writes (a create, then updates that change the title). Every answer is kept.
 */
function startWriter(apiKey: string, brokerExternalId: string, opts: { lanes: number; perSecond: number }) {
  const answers: Answer[] = [];
  let running = true;
  const interval = (1000 * opts.lanes) / opts.perSecond;
  const lane = async (n: number) => {
    for (let seq = 0; running; seq++) {
      const began = performance.now();
      const externalId = `${token}-w${n}-${Math.floor(seq / 6)}`;
      const title = `Upgrade ${token} lane ${n} write ${seq}`;
      const via = nextApi();
      let status = 0;
      let body = "";
      try {
        const res = await send(
          "PUT",
          via,
          `/partner/v1/listings/${externalId}`,
          apiKey,
          listingBody(brokerExternalId, title),
        );
        status = res.status;
        body = res.text;
      } catch (err) {
        body = String(err);
      }
      answers.push({ externalId, title, via, status, body });
      const wait = interval - (performance.now() - began);
      if (wait > 0) await Bun.sleep(wait);
    }
  };
  const loops = Array.from({ length: opts.lanes }, (_, n) => lane(n));
  return {
    answers,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

beforeAll(async () => {
  previous = materialiseRelease(RECORDED);
  await server.unsafe(`CREATE DATABASE "${databaseName}"`);
  // Consumer groups start at the topics' ends: the shared topics carry other runs' events too.
  const kafka = new Kafka({
    clientId: uniqueName("upgrade-test"),
    brokers: urls.KAFKA_BROKERS.split(","),
    logLevel: logLevel.NOTHING,
  });
  const records = [Topics.listingEvents.name, Topics.brokerEvents.name];
  await startGroupsAtEnd(kafka, {
    [groups.INDEXER_GROUP_ID]: records,
    [groups.MEDIA_CONSUMER_GROUP]: records,
    [`${groups.LEADS_GROUP_PREFIX}-counter`]: [Topics.leadEvents.name],
    [`${groups.LEADS_GROUP_PREFIX}-mailer`]: [Topics.leadEvents.name],
    [groups.WEBHOOKS_CONSUMER_GROUP]: [Topics.partnerEvents.name],
    [groups.REPORT_TRACKER_CONSUMER_GROUP]: [...records, Topics.partnerEvents.name],
  });
}, 120_000);

afterAll(async () => {
  await Promise.all(running.splice(0).map((r) => r.process.stop().catch(() => {})));
  await server.unsafe(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`).catch(() => {});
  const opensearch = new OpenSearchClient({ node: urls.OPENSEARCH_URL, requestTimeout: 10_000 });
  await opensearch.indices.delete({ index: `${alias}-v*` }).catch(() => {});
  await opensearch.close();
  await server.end({ timeout: 5 });
  rmSync(mediaDir, { recursive: true, force: true });
  receiver.stop();
}, 120_000);

// What the tests share: the partner, its broker and webhook secret, and every acknowledged write (listing -> the
// titles acknowledged for it, in order).
let apiKey: string;
const brokerId = `${token}-broker`;
let secret: string;
const acknowledged = new Map<string, string[]>();
let leads = 0;

/** A buyer's lead (public, no key) on a listing, read through the API at `baseUrl`, sent where buyers are sent. */
async function lead(baseUrl: string, externalId: string): Promise<void> {
  const id = (await send("GET", baseUrl, `/partner/v1/listings/${externalId}`, apiKey)).body.listing.serviceListingId;
  const res = await fetch(`${buyerBase()}/v1/listings/${id}/leads`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "Ann Buyer", email: "ann.buyer@example.com", message: "Is the lease renewable?" }),
  });
  expect([externalId, res.status]).toEqual([externalId, 202]);
  leads++;
}

/**
 * Replaces every running service of release `from` by the same service of `to`, one at a time in the documented
 * order: the new process ready, then the old one stopped gracefully. The API joins the rotation, both take writes
 * for 2 s, then the old one leaves it and stops (its requests in flight are answered).
 */
async function roll(from: string, to: Source, order: string[]): Promise<void> {
  for (const kind of order) {
    const replaced = running.find((r) => r.kind === kind && r.release === from);
    if (!to.services[kind]) {
      // A service the target release does not have (the marketplace and the portal, rolling back to v1.0.0, whose API served
      // buyers): its traffic went back to that release's API, rolled before it; it just stops.
      if (!replaced) throw new Error(`neither ${from} nor ${to.name} runs ${kind}`);
      await stop(replaced);
      continue;
    }
    const fresh = await start(kind, to);
    if (!replaced) continue; // a service the release rolled from did not have
    if (kind === "api") {
      rotation.push(fresh.baseUrl!);
      await Bun.sleep(2000); // both releases' APIs take writes, to the same listings
      rotation.splice(rotation.indexOf(replaced.baseUrl!), 1);
    }
    await stop(replaced);
  }
}

/** Runs `during` under the steady writer; then every PUT must have been answered 2xx. */
async function underSteadyWrites(during: () => Promise<void>): Promise<void> {
  const writer = startWriter(apiKey, brokerId, { lanes: 3, perSecond: 6 });
  try {
    await during();
  } finally {
    await writer.stop();
  }
  expect(
    writer.answers
      .filter((a) => a.status < 200 || a.status > 299)
      .map((a) => `${a.status} via ${a.via}: ${a.body.slice(0, 200)}`),
  ).toEqual([]);
  expect(new Set(writer.answers.map((a) => a.via)).size).toBe(2); // both releases' APIs answered
  for (const a of writer.answers) acknowledged.set(a.externalId, [...(acknowledged.get(a.externalId) ?? []), a.title]);
}

/** What the database holds of the feed's work: drafts and legacy rows waiting, and every listing's versions. */
async function feedState(): Promise<string> {
  const db = postgres(dbUrl(databaseName), { max: 1, onnotice: () => {} });
  try {
    const [state] = await db`
      SELECT (SELECT count(*)::int FROM feed_drafts) AS drafts,
        (SELECT count(*)::int FROM outbox WHERE feed_pending) AS pending,
        (SELECT count(*)::int FROM outbox) AS outbox,
        (SELECT json_agg(json_build_object('id', l.external_id, 'version', l.version, 'history',
          (SELECT json_agg(h.version ORDER BY h.version) FROM listing_history h WHERE h.listing_id = l.id)))
         FROM listings l WHERE l.external_id = ANY(${[...acknowledged.keys()]}::text[])) AS listings`;
    return JSON.stringify(state);
  } catch (err) {
    return `not read (${String(err)})`;
  } finally {
    await db.end({ timeout: 5 });
  }
}

/**
 * The processes (each one stopped exited 0, the release's whole set runs, none caught a crash), then nothing lost,
 * read through the API of `release`: every listing at its last acknowledged title, the broker and the webhook
 * endpoint; the change feed numbered 1..n without a gap with every version of every listing and every lead; search
 * finding every listing at its last title; a signed listing.published delivered for every listing.
 */
async function verify(release: string, stoppedRelease: string): Promise<void> {
  const rolledOut = stopped.splice(0);
  expect(rolledOut.map((s) => [s.stopped.kind, s.stopped.release, s.exitCode])).toEqual(
    rolledOut.map((s) => [s.stopped.kind, stoppedRelease, 0]),
  );
  expect(rolledOut.length).toBeGreaterThan(0);
  // The release's whole set runs (a service it does not have, the portal in v1.0.0, was stopped by the roll).
  const releaseServices = (release === "current" ? current() : old()).services;
  expect(running.map((r) => [r.kind, r.release, r.process.exitCode()]).sort()).toEqual(
    ROLL_ORDER.filter((k) => releaseServices[k])
      .map((k) => [k, release, null])
      .sort(),
  );
  expect([
    ...rolledOut.flatMap((s) => guardLines(s.stopped.process)),
    ...running.flatMap((r) => guardLines(r.process)),
  ]).toEqual([]);

  const api = running.find((r) => r.kind === "api")!.baseUrl!;
  const stored = new Map<string, { title: string; serviceListingId: number }>();
  for (const externalId of acknowledged.keys()) {
    const res = await send("GET", api, `/partner/v1/listings/${externalId}`, apiKey);
    expect([externalId, res.status]).toEqual([externalId, 200]);
    stored.set(externalId, res.body.listing);
  }
  expect([...stored].map(([id, l]) => [id, l.title])).toEqual(
    [...acknowledged].map(([id, titles]) => [id, titles.at(-1)!]),
  );
  const brokerRead = await send("GET", api, `/partner/v1/brokers/${brokerId}`, apiKey);
  expect([brokerRead.status, brokerRead.body?.broker?.name]).toEqual([200, "Jane Broker"]);
  const endpointRead = await send("GET", api, "/partner/v1/webhook-endpoints/crm", apiKey);
  expect([endpointRead.status, endpointRead.text]).toEqual([200, expect.stringContaining(receiver.url("/hooks"))]);

  const feed = await until(
    "the change feed to hold every acknowledged write",
    async () => {
      const events: any[] = [];
      for (let after = 0; events.length < 100_000; ) {
        const page = await send("GET", api, `/partner/v1/events?after=${after}&limit=1000`, apiKey);
        if (page.status !== 200) throw new Error(`GET /partner/v1/events answered ${page.status}: ${page.text}`);
        if (page.body.results.length === 0) break;
        events.push(...page.body.results);
        after = Number(page.body.nextCursor);
      }
      const versions = (id: string) =>
        events
          .filter(
            (e) =>
              e.recordType === "listing" &&
              e.data.externalListingId === id &&
              /^listing\.(created|updated)$/.test(e.type),
          )
          .map((e) => e.version);
      const received = events.filter((e) => e.type === "lead.received");
      const short = [...acknowledged].filter(([id, titles]) => versions(id).length !== titles.length);
      if (received.length === leads && short.length === 0) return { events, versions, received };
      // What is missing, for the timeout's message: a stuck numbering and a slow one look different here.
      throw new Error(
        `${events.length} events; leads ${received.length} of ${leads}; listings short of their versions: ${JSON.stringify(
          short.slice(0, 5).map(([id, titles]) => [id, versions(id), titles.length]),
        )}`,
      );
    },
    // The previous release's relay numbers what both releases wrote during the roll, on cores other test files share.
    120_000,
  ).catch(async (err: Error) => {
    // Timed out: where the missing versions' writes are (not numbered yet, or gone without a number) tells which.
    throw new Error(`${err.message}; database: ${await feedState()}`);
  });
  expect(feed.events.map((e) => e.sequence)).toEqual(feed.events.map((_, i) => i + 1));
  expect([...acknowledged].map(([id]) => [id, feed.versions(id)])).toEqual(
    [...acknowledged].map(([id, titles]) => [id, titles.map((_, i) => i + 1)]),
  );
  expect(feed.received.map((e) => e.data.officeLeadCount)).toEqual(feed.received.map((_, i) => i + 1));

  const expected = new Map([...acknowledged].map(([id, titles]) => [stored.get(id)!.serviceListingId, titles.at(-1)]));
  await until(
    "search to find every listing at its last title",
    async () => {
      const found = new Map<number, string>();
      for (let cursor: string | null = null, pages = 0; pages < 20; pages++) {
        const res = await send(
          "GET",
          buyerBase(),
          `/v1/listings?q=${token}&limit=50${cursor ? `&cursor=${cursor}` : ""}`,
          null,
        );
        for (const r of res.body.results) found.set(r.serviceListingId, r.title);
        cursor = res.body.nextCursor;
        if (!cursor) break;
      }
      return [...expected].every(([id, title]) => found.get(id) === title);
    },
    60_000,
  );

  const published = await until(
    "listing.published delivered for every listing",
    async () => {
      const ids = new Set(receiver.requests("/hooks").map((r) => verified(r, secret).data.externalListingId));
      return [...acknowledged.keys()].every((id) => ids.has(id)) ? ids : null;
    },
    60_000,
  );
  expect([...published].sort()).toEqual([...acknowledged.keys()].sort());
}

test(`rolling upgrade from ${PREVIOUS}: its services run on the new schema, then each is replaced one at a time under steady writes, with no failed request and nothing lost`, async () => {
  // 1. The previous release on an empty database: its migrations (its compose `migrate` one-shot), its services.
  const migrateOld = Bun.spawnSync([previous.bun, "packages/database/src/migrate-main.ts"], {
    cwd: previous.dir,
    env: { ...process.env, DATABASE_URL: dbUrl(databaseName) },
    stdout: "pipe",
    stderr: "pipe",
  });
  expect([migrateOld.exitCode, migrateOld.stderr.toString()]).toEqual([0, expect.stringContaining("migrate: applied")]);
  // The documented roll covers every service of this release's compose file, and the previous release's too.
  expect(Object.keys(current().services).sort()).toEqual([...ROLL_ORDER].sort());
  expect(ROLL_ORDER).toEqual(expect.arrayContaining(Object.keys(old().services)));
  expect([...ROLLBACK_ORDER].sort()).toEqual([...ROLL_ORDER].sort());
  const olds = await Promise.all(ROLL_ORDER.filter((kind) => old().services[kind]).map((kind) => start(kind, old())));
  const oldApi = olds.find((r) => r.kind === "api")!;
  rotation.push(oldApi.baseUrl!);

  // 2. Data written through the previous release: a partner (its admin CLI), a broker, a webhook endpoint,
  // listings, a lead.
  const created = Bun.spawnSync(
    [
      previous.bun,
      "services/admin/src/cli.ts",
      "--json",
      "partners",
      "create",
      "--name",
      `Upgrade ${token}`,
      "--lead-tracking",
    ],
    { cwd: previous.dir, env: { ...process.env, DATABASE_URL: dbUrl(databaseName) }, stdout: "pipe", stderr: "pipe" },
  );
  expect([created.exitCode, created.stderr.toString()]).toEqual([0, expect.any(String)]);
  apiKey = (JSON.parse(created.stdout.toString()) as { apiKey: string }).apiKey;
  const broker = await send("PUT", oldApi.baseUrl!, `/partner/v1/brokers/${brokerId}`, apiKey, {
    name: "Jane Broker",
    email: "jane.broker@example.com",
    forwardingEmail: "leads@crm.example.com",
    licenses: [],
    serviceAreas: [{ city: "Austin", state: "TX", country: "US" }],
  });
  expect([broker.status, broker.text]).toEqual([201, expect.any(String)]);
  const endpoint = await send("PUT", oldApi.baseUrl!, "/partner/v1/webhook-endpoints/crm", apiKey, {
    url: receiver.url("/hooks"),
    events: ["listing.published"],
  });
  expect([endpoint.status, endpoint.text]).toEqual([201, expect.any(String)]);
  secret = endpoint.body.endpoint?.secret ?? endpoint.body.secret;
  for (const [externalId, titles] of [
    [`${token}-old-1`, [`Taqueria ${token} before the upgrade`]],
    [`${token}-old-2`, [`Bakery ${token} before the upgrade`, `Bakery ${token} updated before the upgrade`]],
  ] as const) {
    for (const title of titles) {
      const res = await send(
        "PUT",
        oldApi.baseUrl!,
        `/partner/v1/listings/${externalId}`,
        apiKey,
        listingBody(brokerId, title),
      );
      expect([res.status, res.text]).toEqual([title === titles[0] ? 201 : 200, expect.any(String)]);
    }
    acknowledged.set(externalId, [...titles]);
  }
  await lead(oldApi.baseUrl!, `${token}-old-1`);

  await underSteadyWrites(async () => {
    await Bun.sleep(2000);
    // 3. The new schema under the running previous release (docs/upgrades.md: migrate first).
    const migrated = postgres(dbUrl(databaseName), { max: 1, onnotice: () => {} });
    const applied = await migrate(migrated).finally(() => migrated.end({ timeout: 5 }));
    const before = new Set(
      loadMigrations(join(previous.dir, "packages", "database", "migrations")).map((m) => m.version),
    );
    expect(applied).toEqual(loadMigrations().flatMap((m) => (before.has(m.version) ? [] : [m.version])));
    expect(applied.length).toBeGreaterThan(0);
    await lead(oldApi.baseUrl!, `${token}-old-1`); // the previous release's API on the new schema
    await Bun.sleep(3000);
    // 4. The roll.
    await roll(PREVIOUS, current(), ROLL_ORDER);
    await lead(rotation[0]!, `${token}-old-2`); // the new release's API
    await Bun.sleep(2000);
  });
  // 5. Nothing lost, read through the new release.
  await verify("current", PREVIOUS);
  // Bounds with room for the other test files sharing the cores: 12 service processes start and stop here.
}, 300_000);

test(`rolling back to ${PREVIOUS} (its services, the schema left as it is) under steady writes: no failed request, and everything the new release took is there`, async () => {
  if (!running.some((r) => r.kind === "api" && r.release === "current"))
    throw new Error("the upgrade before did not complete: nothing to roll back");
  await underSteadyWrites(async () => {
    await Bun.sleep(2000);
    await roll("current", old(), ROLLBACK_ORDER);
    await lead(rotation[0]!, `${token}-old-2`); // the previous release's API again
    await Bun.sleep(2000);
  });
  await verify(PREVIOUS, "current");
}, 300_000);
