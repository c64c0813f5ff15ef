// Issue 40: the servers as production runs them. A secured profile of this file's own (test/secured/support/
// secured-servers.ts: PostgreSQL with TLS and verify-full, Redis with TLS and an ACL user, a 3-node Kafka 3.9 KRaft
// cluster over SASL_SSL with SCRAM users made at format time, replication factor 3 and min.insync.replicas 2,
// OpenSearch with its security plugin: HTTPS and basic authentication), every service a real process on it:
//   1. the whole journey (a PUT with photos, searchable, the webhook, the lead e-mailed once), every client over TLS
//      and authenticated, Kafka and Redis with a client certificate too;
//   2. a wrong password, and a certificate not trusted, for each server: readiness names the server (503 where it
//      is required), one log line says what is wrong, the process stays up, and it recovers once fixed (the
//      password made valid on the server; the CA file replaced, as a Secret update does) without a restart;
//   3. faults of the replicated cluster under steady partner writes and buyer leads with every consumer running:
//      the leader of the busiest partition killed and restarted after 30 s, a rolling restart of all three
//      brokers, two brokers down, PostgreSQL restarted (verify-full on the reconnect). Each logs its figures
//      (acknowledged, lost, duplicated, time to converge): docs/operations.md, "Replicated Kafka: fault runs".
// Everything runs on loopback ports of its own, so other files run meanwhile; its servers are removed at the end.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Kafka, logLevel } from "kafkajs";
import postgres from "postgres";
import { Webhook } from "standardwebhooks";
import { Topics, topicSpecs } from "@pss/contracts";
import { createEnvReader, ensureTopics, readKafkaConfig } from "@pss/service-kit";
import { makeCertificateAuthority } from "../../infra/src/index.ts";
import { createPartnerAdmin } from "../../services/api/src/admin/partner-admin.ts";
import {
  guardLines,
  spawnService,
  waitUntil,
  type ServiceProcess,
} from "../../services/api/test/faults/support/fault-harness.ts";
import { sample } from "../../services/api/test/support/harness.ts";
import { startSmtpSink, type SmtpSink } from "../../services/leads/test/support/smtp-sink.ts";
import { startImageServer, type ImageServer } from "../../services/media/test/support/image-server.ts";
import { startReceiver, type Receiver } from "../../services/webhooks/test/support/receiver.ts";
import { uniqueName } from "../support/env.ts";
import { freePort } from "../support/ports.ts";
import { setKafkaScramPassword, startSecuredServers, type SecuredServers } from "./support/secured-servers.ts";
import { report, settle, startTraffic, type Figures, type Traffic } from "./support/steady-traffic.ts";

const ROOT = join(import.meta.dir, "..", "..");
const run = crypto.randomUUID().slice(0, 8);
const mediaDir = join(ROOT, ".data", `media-secured-${run}`);

let servers: SecuredServers;
let clients: ReturnType<SecuredServers["clients"]>;
let images: ImageServer;
let smtp: SmtpSink;
let receiver: Receiver;
const stack = new Map<string, ServiceProcess>();
const extra: ServiceProcess[] = [];
let apiBase = "";
/** Where buyers search and send leads: the marketplace. */
let marketplaceBase = "";
let traffic: Traffic | null = null;

/** Every service's settings on the secured servers, with a client certificate for Kafka, Redis and OpenSearch. */
function serviceEnv(): Record<string, string> {
  const { certs } = servers.profile;
  return {
    ...servers.env,
    ...Object.fromEntries(
      ["KAFKA", "REDIS", "OPENSEARCH"].flatMap((p) => [
        [`${p}_TLS_CERT_FILE`, certs.clientCertFile],
        [`${p}_TLS_KEY_FILE`, certs.clientKeyFile],
      ]),
    ),
    NODE_ENV: "development",
    MEDIA_STORAGE: "local",
    MEDIA_DIR: mediaDir,
    LOG_LEVEL: "info",
  };
}

async function startService(name: string, env: Record<string, string>, script?: string): Promise<ServiceProcess> {
  const port = await freePort();
  const healthVar = name === "api" ? "API_HEALTH_PORT" : "HEALTH_PORT";
  return spawnService(name, { ...serviceEnv(), ...env, [healthVar]: String(port) }, port, script);
}

const readyz = async (p: ServiceProcess) => {
  const res = await fetch(`http://127.0.0.1:${p.port}/readyz`, { signal: AbortSignal.timeout(5000) });
  return { status: res.status, body: (await res.json()) as { checks: Record<string, string>; degraded?: string[] } };
};

beforeAll(async () => {
  const started = Date.now();
  servers = await startSecuredServers();
  console.error(
    `secured servers (3 Kafka nodes, OpenSearch with security) ready in ${(Date.now() - started) / 1000} s`,
  );
  clients = servers.clients();
  await clients.redis.connect();
  // The migration Job's command, over TLS with verify-full.
  const migrate = Bun.spawnSync([process.execPath, join(ROOT, "packages", "database", "src", "migrate-main.ts")], {
    env: { ...process.env, ...servers.env },
  });
  if (migrate.exitCode !== 0) throw new Error(`migrate failed: ${migrate.stderr.toString()}`);
  // Topics as a service creates them from this configuration (RF 3, min.insync.replicas 2).
  const r = createEnvReader(servers.env);
  const kafkaConfig = readKafkaConfig(r, "secured-test");
  r.done();
  // Retried as a service's boot retries it: a cluster that just formed may not have placed its metadata yet.
  await waitUntil(
    "the topics to be created",
    () => ensureTopics(clients.kafka, topicSpecs(kafkaConfig.topics)).then(() => true),
    60_000,
  );
  images = await startImageServer();
  smtp = await startSmtpSink();
  receiver = startReceiver();
  mkdirSync(mediaDir, { recursive: true });
}, 420_000);

afterAll(async () => {
  await Promise.all([...stack.values(), ...extra].map((p) => p.stop().catch(() => 0)));
  images?.stop();
  receiver?.stop();
  await smtp?.stop();
  await clients?.sql.end({ timeout: 5 }).catch(() => {});
  clients?.redis.disconnect();
  await clients?.opensearch.close().catch(() => {});
  await servers?.destroy();
  rmSync(mediaDir, { recursive: true, force: true });
}, 180_000);

test("every server refuses plaintext; created topics are replicated 3 times with min.insync.replicas 2", async () => {
  const { ports } = servers.profile;
  // PostgreSQL: TCP without TLS is rejected by the server itself.
  const plain = postgres(`postgres://pss:${servers.profile.secrets.postgres}@127.0.0.1:${ports.postgres}/pss`, {
    max: 1,
    connect_timeout: 5,
    onnotice: () => {},
  });
  expect(
    await plain`SELECT 1`.then(
      () => "connected",
      (e: Error) => e.message,
    ),
  ).toContain("no encryption");
  await plain.end({ timeout: 1 });
  // Kafka: no plaintext listener.
  const plainKafka = new Kafka({
    brokers: [servers.kafka.nodes[0]!.address],
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
    connectionTimeout: 2000,
    requestTimeout: 3000,
  });
  const admin = plainKafka.admin();
  expect(
    await admin
      .connect()
      .then(() => admin.listTopics())
      .then(
        () => "connected",
        () => "refused",
      ),
  ).toBe("refused");
  await admin.disconnect().catch(() => {});
  // OpenSearch: HTTPS only, and only with credentials.
  expect(
    await fetch(`http://127.0.0.1:${ports.opensearch}/`).then(
      () => "answered",
      () => "refused",
    ),
  ).toBe("refused");
  const anonymous = await fetch(`https://127.0.0.1:${ports.opensearch}/`, {
    tls: { ca: await Bun.file(servers.profile.certs.caFile).text() },
  });
  expect(anonymous.status).toBe(401);

  const described = await clients.kafka.admin();
  await described.connect();
  try {
    const metadata = await described.fetchTopicMetadata({ topics: [Topics.listingEvents.name] });
    expect(metadata.topics[0]!.partitions.every((p) => p.replicas.length === 3 && p.isr.length === 3)).toBe(true);
    const configs = await described.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: 2, name: Topics.listingEvents.name, configNames: ["min.insync.replicas"] }],
    });
    expect(configs.resources[0]!.configEntries[0]!.configValue).toBe("2");
  } finally {
    await described.disconnect();
  }
}, 60_000);

test("a PUT with photos becomes searchable, is announced by webhook, and its lead is e-mailed once: every client over TLS and authenticated", async () => {
  const apiPort = await freePort();
  apiBase = `http://127.0.0.1:${apiPort}`;
  const marketplacePort = await freePort();
  marketplaceBase = `http://127.0.0.1:${marketplacePort}`;
  const starts: [string, Record<string, string>][] = [
    [
      "marketplace",
      {
        MARKETPLACE_PORT: String(marketplacePort),
        PUBLIC_BASE_URL: marketplaceBase,
        LEAD_RATE_LIMIT_PER_ADDRESS: "0",
        LEAD_RATE_LIMIT_PER_LISTING_ADDRESS: "0",
        LEAD_RATE_LIMIT_GLOBAL_PER_MINUTE: "0",
      },
    ],
    [
      "api",
      {
        API_PORT: String(apiPort),
        OUTBOX_RELAY_ENABLED: "true",
        // Published rows stay an hour: the fault runs compare what was written with what Kafka delivered.
        OUTBOX_RETENTION_SECONDS: "3600",
        PUBLIC_BASE_URL: apiBase,
        LEAD_RATE_LIMIT_PER_ADDRESS: "0",
        LEAD_RATE_LIMIT_PER_LISTING_ADDRESS: "0",
        LEAD_RATE_LIMIT_GLOBAL_PER_MINUTE: "0",
      },
    ],
    ["media", { MEDIA_ALLOWED_HOSTS: `127.0.0.1:${images.port}`, MEDIA_GC_INTERVAL_MS: "0", PUBLIC_BASE_URL: apiBase }],
    ["indexer", {}],
    [
      "leads",
      {
        SMTP_HOST: "127.0.0.1",
        SMTP_PORT: String(smtp.port),
        SMTP_FROM: "Leads <leads@secured.test>",
        LEAD_DELIVERY_RETRY_SECONDS: "1",
        PUBLIC_BASE_URL: apiBase,
      },
    ],
    ["webhooks", { WEBHOOK_ALLOWED_HOSTS: receiver.hostPort, PUBLIC_BASE_URL: apiBase }],
  ];
  await Promise.all(starts.map(async ([name, env]) => stack.set(name, await startService(name, env))));
  for (const p of stack.values())
    await waitUntil(`${p.name} to be ready`, async () => (await readyz(p)).status === 200, 90_000);

  const partner = await createPartnerAdmin({ sql: clients.sql, redis: clients.redis }).createPartner({
    name: uniqueName("secured-partner"),
    leadTracking: true,
  });
  const headers = { authorization: `Bearer ${partner.apiKey}`, "content-type": "application/json" };
  const put = (path: string, body: unknown) =>
    fetch(apiBase + path, { method: "PUT", headers, body: JSON.stringify(body) });
  const webhookPath = `/hooks/${run}`;
  const endpoint = await put(`/partner/v1/webhook-endpoints/${uniqueName("endpoint")}`, {
    url: receiver.url(webhookPath),
    events: ["listing.published", "listing.media.processed", "lead.received"],
  });
  expect(endpoint.status).toBe(201);
  const { secret } = (await endpoint.json()) as { secret: string };

  const brokerId = uniqueName("broker");
  expect((await put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
  const title = `Secured bakery ${run}`;
  const listing = await put(
    `/partner/v1/listings/${uniqueName("listing")}`,
    sample.listing(brokerId, {
      title,
      photos: [
        { url: images.url("/photo.jpg"), sortKey: 1 },
        { url: images.url("/photo-2.jpg"), sortKey: 2 },
      ],
    }),
  );
  expect(listing.status).toBe(201);
  const listingId = ((await listing.json()) as { serviceListingId: number }).serviceListingId;

  // Searchable: the API asks OpenSearch over HTTPS with basic authentication.
  await waitUntil(
    "the listing to be searchable",
    async () => {
      const res = await fetch(`${marketplaceBase}/v1/listings?q=${encodeURIComponent(`bakery ${run}`)}`);
      const body = (await res.json()) as { results?: { serviceListingId: number }[] };
      return body.results?.some((r) => r.serviceListingId === listingId);
    },
    90_000,
  );
  // Photos processed by media (Kafka over SASL_SSL), announced with the listing: signed webhooks.
  const verifier = new Webhook(secret);
  const announced = await waitUntil(
    "listing.published and listing.media.processed at the receiver",
    async () => {
      const types = receiver.requests(webhookPath).map((r) => {
        verifier.verify(r.body, r.headers);
        return (JSON.parse(r.body) as { type: string }).type;
      });
      return types.includes("listing.published") && types.includes("listing.media.processed") ? types : null;
    },
    90_000,
  );
  expect(announced).toContain("listing.published");

  const lead = await fetch(`${marketplaceBase}/v1/listings/${listingId}/leads`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "Pat Buyer", email: "pat@example.com", message: "Is the oven included?" }),
  });
  expect(lead.status).toBe(202);
  const { leadId } = (await lead.json()) as { leadId: string };
  await waitUntil("the lead's e-mail", async () => smtp.received.length > 0, 60_000);
  await waitUntil(
    "lead.received at the receiver",
    async () => receiver.requests(webhookPath).some((r) => r.body.includes('"lead.received"')),
    60_000,
  );
  // Once, whatever happened: two seconds more bring no second copy.
  await Bun.sleep(2000);
  const mails = smtp.received.filter((m) => (m.headers["message-id"] ?? "").startsWith(`<lead-${leadId}@`));
  expect(mails).toHaveLength(1);

  // Every service's PostgreSQL sessions are TLS (the server refuses others; this shows the clients asked for it).
  const sessions = await clients.sql<{ application_name: string; ssl: boolean }[]>`
    SELECT a.application_name, s.ssl FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
    WHERE a.application_name LIKE 'pss-%' AND a.backend_type = 'client backend'`;
  const apps = new Set(sessions.map((s) => s.application_name));
  for (const app of ["pss-api", "pss-indexer", "pss-media", "pss-leads", "pss-webhooks"]) expect(apps).toContain(app);
  expect(sessions.filter((s) => !s.ssl)).toEqual([]);
  for (const p of stack.values()) {
    expect([p.name, p.exitCode(), guardLines(p)]).toEqual([p.name, null, []]);
  }

  // The lead listings and the partner for the fault runs that follow.
  const leadListings = [listingId];
  for (let i = 0; i < 2; i++) {
    const res = await put(
      `/partner/v1/listings/${uniqueName("lead-listing")}`,
      sample.listing(brokerId, { photos: [] }),
    );
    leadListings.push(((await res.json()) as { serviceListingId: number }).serviceListingId);
  }
  traffic = {
    partnerId: partner.partnerId,
    apiBase,
    marketplaceBase,
    apiKey: partner.apiKey,
    leadListings,
    sql: clients.sql,
    kafka: clients.kafka,
    smtp,
    receiver,
    webhookPath,
  };
}, 240_000);

describe("credentials and certificates refused: a clear readiness failure, no crash loop, recovery once fixed", () => {
  /** An indexer (PostgreSQL, Kafka, OpenSearch) and an API (PostgreSQL, Redis) on their own groups and alias. */
  async function startPair(env: Record<string, string>): Promise<[ServiceProcess, ServiceProcess]> {
    const indexer = await startService("indexer", {
      ...env,
      INDEXER_GROUP_ID: uniqueName("secured-indexer"),
      OPENSEARCH_INDEX_ALIAS: uniqueName("secured-check"),
      RECONCILE_INTERVAL_MS: "0",
    });
    const api = await startService("api", {
      ...env,
      API_PORT: String(await freePort()),
      OUTBOX_RELAY_ENABLED: "false",
      PUBLIC_BASE_URL: "http://127.0.0.1:1",
    });
    extra.push(indexer, api);
    return [indexer, api];
  }

  const logged = (p: ServiceProcess, text: string) => p.lines.some((l) => l.includes(text));

  async function expectRefusedThenRecovered(
    indexer: ServiceProcess,
    api: ServiceProcess,
    problem: string,
    fix: () => Promise<void>,
  ): Promise<void> {
    const expected: [ServiceProcess, string][] = [
      ...["postgres", "kafka", "opensearch"].map((s) => [indexer, s] as [ServiceProcess, string]),
      [api, "postgres"],
      [api, "redis"],
    ];
    const unnamed = () => expected.filter(([p, s]) => !logged(p, `"${s}: ${problem}; not ready`));
    const deadline = Date.now() + 90_000;
    // Readiness runs its checks when asked (as Kubernetes asks every few seconds).
    while (unnamed().length > 0 && Date.now() < deadline) {
      await Promise.all([readyz(indexer), readyz(api)]);
      await Bun.sleep(1000);
    }
    const why = (p: ServiceProcess) =>
      p.lines
        .filter((l) => /"level":"(error|warn)"/.test(l))
        .slice(-8)
        .join("\n");
    expect({
      unnamed: unnamed().map(([p, s]) => `${p.name}: ${s}`),
      log: unnamed().length ? `${why(indexer)}\n${why(api)}` : "",
    }).toEqual({ unnamed: [], log: "" });
    const indexerReady = await readyz(indexer);
    expect(indexerReady.status).toBe(503);
    expect(indexerReady.body.checks).toMatchObject({ postgres: "failing", kafka: "failing", opensearch: "failing" });
    const apiReady = await readyz(api);
    expect(apiReady.status).toBe(503);
    expect(apiReady.body.checks).toMatchObject({ postgres: "failing" });
    // Not a crash loop: both processes are up all along, and say each problem once, not once per retry.
    await Bun.sleep(3000);
    for (const p of [indexer, api]) {
      expect([p.name, p.exitCode(), guardLines(p)]).toEqual([p.name, null, []]);
      for (const s of ["postgres", "kafka", "opensearch", "redis"])
        expect(p.lines.filter((l) => l.includes(`"${s}: ${problem}; not ready`)).length).toBeLessThanOrEqual(1);
    }
    await fix();
    await waitUntil(
      "both to be ready again, without a restart",
      async () => (await readyz(indexer)).status === 200 && (await readyz(api)).status === 200,
      90_000,
    );
    await waitUntil("Redis to be connected again", async () => !(await readyz(api)).body.degraded, 30_000);
    expect([indexer.exitCode(), api.exitCode()]).toEqual([null, null]);
    for (const s of ["postgres", "kafka", "opensearch"]) expect(logged(indexer, `"${s}: connected again"`)).toBe(true);
    expect(logged(api, `"redis: connected again"`)).toBe(true);
    await Promise.all([indexer.stop(), api.stop()]);
  }

  test("a wrong password for each server, until the server accepts it", async () => {
    const user = `late_${run}`;
    const secret = `late-${crypto.randomUUID()}`;
    const url = new URL(servers.env.DATABASE_URL!);
    url.username = user;
    url.password = secret;
    // A PostgreSQL role with another password, and no such user yet on Redis, Kafka or OpenSearch.
    await clients.sql.unsafe(`CREATE ROLE ${user} LOGIN PASSWORD '${crypto.randomUUID()}' IN ROLE pss`);
    const [indexer, api] = await startPair({
      DATABASE_URL: url.toString(),
      REDIS_USERNAME: user,
      REDIS_PASSWORD: secret,
      KAFKA_SASL_USERNAME: user,
      KAFKA_SASL_PASSWORD: secret,
      OPENSEARCH_USERNAME: user,
      OPENSEARCH_PASSWORD: secret,
    });
    await expectRefusedThenRecovered(indexer, api, "authentication failed", async () => {
      await clients.sql.unsafe(`ALTER ROLE ${user} PASSWORD '${secret}'`);
      await clients.redis.call("ACL", "SETUSER", user, "on", `>${secret}`, "~*", "&*", "+@all");
      await setKafkaScramPassword(servers, user, secret);
      const res = await clients.opensearch.transport.request({
        method: "PUT",
        path: `/_plugins/_security/api/internalusers/${user}`,
        body: { password: secret, backend_roles: ["admin"] },
      });
      expect(res.statusCode).toBeLessThan(300);
    });
  }, 300_000);

  test("a certificate not trusted by each client, until its CA file is replaced", async () => {
    const dir = join(servers.profile.dir, `wrong-ca-${run}`);
    const other = makeCertificateAuthority(dir, "a CA nobody uses", "other");
    const files: Record<string, string> = {};
    for (const prefix of ["DATABASE", "REDIS", "KAFKA", "OPENSEARCH"]) {
      files[`${prefix}_TLS_CA_FILE`] = join(dir, `${prefix.toLowerCase()}-ca.pem`);
      copyFileSync(other, files[`${prefix}_TLS_CA_FILE`]!);
    }
    const [indexer, api] = await startPair(files);
    await expectRefusedThenRecovered(indexer, api, "certificate not trusted", async () => {
      // Replaced the way a mounted Secret is: a new file renamed over the old one.
      for (const path of Object.values(files)) {
        copyFileSync(servers.profile.certs.caFile, `${path}.new`);
        renameSync(`${path}.new`, path);
      }
    });
  }, 300_000);
});

describe("faults of the replicated Kafka cluster, under steady writes with every consumer running", () => {
  const PUTS_PER_SECOND = 8;

  beforeAll(() => {
    if (!traffic) throw new Error("the journey test did not leave its stack running");
  });

  /** The node leading most of the partitions the run's writes went to (the busiest partition's leader). */
  async function busiestLeader(): Promise<number> {
    const admin = clients.kafka.admin();
    await admin.connect();
    try {
      const offsets = await admin.fetchTopicOffsets(Topics.listingEvents.name);
      const busiest = offsets.reduce((a, b) => (Number(b.high) > Number(a.high) ? b : a));
      const { topics } = await admin.fetchTopicMetadata({ topics: [Topics.listingEvents.name] });
      return topics[0]!.partitions.find((p) => p.partitionId === busiest.partition)!.leader;
    } finally {
      await admin.disconnect();
    }
  }

  /** Every partition of the event topics has all three replicas in sync again. */
  async function fullyReplicated(): Promise<boolean> {
    const admin = clients.kafka.admin();
    await admin.connect();
    try {
      const { topics } = await admin.fetchTopicMetadata({
        topics: [Topics.listingEvents.name, Topics.leadEvents.name, Topics.partnerEvents.name],
      });
      return topics.every((t) => t.partitions.every((p) => p.isr.length === 3));
    } finally {
      await admin.disconnect();
    }
  }

  /** Whatever a failed run left stopped is started again, so the next run begins with the whole cluster. */
  async function restoreAll(): Promise<void> {
    for (const node of servers.kafka.nodes) if (!node.running()) await node.start();
    if (!(await servers.postgres.running())) await servers.postgres.start();
    await waitUntil(
      "every server back",
      async () => (await servers.kafka.ready()) && servers.postgres.ready(),
      180_000,
    );
  }
  afterEach(restoreAll, 240_000);

  /** What every fault run must show, with the run's details in the failure message. */
  async function expectSound(f: Figures, opts: { refusalsAllowed: boolean }): Promise<void> {
    const refused = opts.refusalsAllowed ? 0 : f.refused;
    if (f.lostEventIds.length > 0) {
      // What the outbox and the relay say of each event the log does not hold.
      const rows = await clients.sql`
        SELECT payload->>'eventId' AS event_id, topic, message_key, created_at, published_at FROM outbox
        WHERE payload->>'eventId' = ANY(${f.lostEventIds.slice(0, 5)}::text[])`;
      const relay = stack.get("api")!.lines.filter((l) => f.lostEventIds.slice(0, 5).some((id) => l.includes(id)));
      console.error(`events not in the log:\n${JSON.stringify(rows, null, 1)}\nrelay:\n${relay.join("\n")}`);
    }
    if (f.lost.announcements > 0) {
      const facts = await clients.sql`
        SELECT count(*)::int AS written, count(published_at)::int AS published FROM outbox
        WHERE topic = ${Topics.partnerEvents.name} AND payload->>'type' = 'lead.received'
          AND payload->>'partnerId' = ${traffic!.partnerId}`;
      const deliveries = await clients.sql`
        SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE event_type = 'lead.received' GROUP BY status`;
      console.error(`lead.received facts: ${JSON.stringify(facts)}; deliveries: ${JSON.stringify(deliveries)}`);
    }
    expect({
      lost: f.lost,
      duplicatedEffects: f.duplicated.emails + f.duplicated.webhooks,
      converged: f.convergedMs >= 0,
      refused,
      details: f.convergedMs >= 0 && refused === 0 ? [] : [...f.missingSample, ...f.refusedAnswers],
    }).toEqual({
      lost: { events: 0, writes: 0, leads: 0, announcements: 0 },
      duplicatedEffects: 0,
      converged: true,
      refused: 0,
      details: [],
    });
  }

  function expectNoServiceRestarted(): void {
    for (const p of stack.values()) expect([p.name, p.exitCode(), guardLines(p)]).toEqual([p.name, null, []]);
  }

  test("the leader of the busiest partition killed (SIGKILL) and started again after 30 s", async () => {
    const t = traffic!;
    const run = await startTraffic(t, "leader SIGKILL + restart after 30 s", PUTS_PER_SECOND);
    await Bun.sleep(4000);
    const leaderId = await busiestLeader();
    const node = servers.kafka.nodes.find((n) => n.id === leaderId)!;
    const killedAt = Date.now();
    await node.kill();
    await Bun.sleep(30_000);
    await node.start();
    await waitUntil("the node to rejoin the ISR of every partition", fullyReplicated, 240_000);
    const backAt = Date.now();
    await Bun.sleep(3000);
    await run.stop();
    const figures = await settle(t, run, backAt, 180_000);
    console.log(
      report(figures, { killed: `node ${leaderId}`, "down for": `${((backAt - killedAt) / 1000).toFixed(0)} s` }),
    );
    await expectSound(figures, { refusalsAllowed: false });
    expect(figures.maxPutMs).toBeLessThan(5000);
    // Consumers went on without the node: indexing resumed within 45 s of the kill at the latest (10–23 s
    // measured), not only once the node returned.
    expect(figures.maxIndexingStallMs).toBeLessThan(45_000);
    expectNoServiceRestarted();
  }, 400_000);

  test("a rolling restart of all three brokers, one at a time, as an operator upgrades Kafka", async () => {
    const t = traffic!;
    const run = await startTraffic(t, "rolling restart of 3 brokers", PUTS_PER_SECOND);
    await Bun.sleep(3000);
    const began = Date.now();
    for (const node of servers.kafka.nodes) {
      await node.stop(); // SIGTERM: a controlled shutdown moves its leaderships first
      await node.start();
      await waitUntil(`node ${node.id} back in the ISR of every partition`, fullyReplicated, 240_000);
    }
    const doneAt = Date.now();
    await Bun.sleep(3000);
    await run.stop();
    const figures = await settle(t, run, doneAt, 180_000);
    console.log(report(figures, { "restart took": `${((doneAt - began) / 1000).toFixed(0)} s` }));
    await expectSound(figures, { refusalsAllowed: false });
    expect(figures.maxPutMs).toBeLessThan(5000);
    expectNoServiceRestarted();
  }, 600_000);

  test("two brokers down (below min.insync.replicas): writes still acknowledged, nothing published until one returns", async () => {
    const t = traffic!;
    const run = await startTraffic(t, "two brokers down for 20 s", PUTS_PER_SECOND);
    await Bun.sleep(3000);
    const [a, b] = servers.kafka.nodes;
    await Promise.all([a!.kill(), b!.kill()]);
    const downAt = Date.now();
    await Bun.sleep(20_000);
    // Written after both were gone, with time for anything in flight to settle: not one published.
    const stuck = await t.sql<{ n: number; published: number }[]>`
      SELECT count(*)::int AS n, count(published_at)::int AS published FROM outbox
      WHERE payload->>'partnerId' = ${t.partnerId} AND created_at > ${new Date(downAt + 5000)}`;
    await a!.start();
    const oneBackAt = Date.now();
    await waitUntil(
      "publishing to resume with one broker back",
      async () =>
        (
          await t.sql<{ published: number }[]>`
            SELECT count(published_at)::int AS published FROM outbox
            WHERE payload->>'partnerId' = ${t.partnerId} AND created_at > ${new Date(downAt + 5000)}`
        )[0]!.published > 0,
      240_000,
    );
    const resumedMs = Date.now() - oneBackAt;
    await b!.start();
    await waitUntil("every node back in the ISR", fullyReplicated, 240_000);
    const backAt = Date.now();
    await Bun.sleep(3000);
    await run.stop();
    const figures = await settle(t, run, backAt, 180_000);
    console.log(
      report(figures, {
        "written while down": stuck[0]!.n,
        "published while down": stuck[0]!.published,
        "publishing resumed": `${(resumedMs / 1000).toFixed(1)} s after one broker returned`,
      }),
    );
    expect(stuck[0]!.n).toBeGreaterThan(0);
    expect(stuck[0]!.published).toBe(0);
    await expectSound(figures, { refusalsAllowed: false });
    expectNoServiceRestarted();
  }, 600_000);

  test("PostgreSQL restarted under load: every service reconnects with verify-full and nothing acknowledged is lost", async () => {
    const t = traffic!;
    const run = await startTraffic(t, "PostgreSQL restart (TLS, verify-full)", PUTS_PER_SECOND);
    await Bun.sleep(3000);
    await servers.postgres.stop();
    const downAt = Date.now();
    await Bun.sleep(5000);
    await servers.postgres.start();
    await waitUntil("PostgreSQL to answer", () => servers.postgres.ready(), 60_000);
    const upAt = Date.now();
    // When each service was ready again, and what the last to be ready was waiting for.
    const readyAt = new Map<string, number>();
    let lastWaiting = "";
    await waitUntil(
      "every service ready again",
      async () => {
        for (const p of stack.values()) {
          if (readyAt.has(p.name)) continue;
          const r = await readyz(p);
          if (r.status === 200) readyAt.set(p.name, Date.now());
          else lastWaiting = `${p.name} ${JSON.stringify(r.body.checks)}`;
        }
        return readyAt.size === stack.size;
      },
      90_000,
    );
    const readyMs = Date.now() - upAt;
    await Bun.sleep(3000);
    await run.stop();
    const figures = await settle(t, run, upAt, 180_000);
    console.log(
      report(figures, {
        "down for": `${((upAt - downAt) / 1000).toFixed(1)} s`,
        "services ready": `${(readyMs / 1000).toFixed(1)} s after it answered (the last: ${lastWaiting || "none waited"})`,
      }),
    );
    await expectSound(figures, { refusalsAllowed: true });
    // Reconnected over TLS: every session is encrypted.
    const sessions = await t.sql<{ ssl: boolean }[]>`
      SELECT s.ssl FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
      WHERE a.application_name LIKE 'pss-%' AND a.backend_type = 'client backend'`;
    expect(sessions.length).toBeGreaterThan(0);
    expect(sessions.every((s) => s.ssl)).toBe(true);
    expectNoServiceRestarted();
  }, 300_000);
});
