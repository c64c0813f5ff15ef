// Every dependency down at once, from the start: PostgreSQL, Redis, Kafka and OpenSearch are reached through
// loopback ports that refuse connections until the test opens them (the shared servers keep running). The API,
// the indexer and the relay-only process boot anyway, answer fast, and start working by themselves once the
// dependencies answer; the media and leads workers boot, wait, and stop cleanly when asked.
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { Client as OpenSearchClient } from "@opensearch-project/opensearch";
import Redis from "ioredis";
import { Kafka, logLevel } from "kafkajs";
import postgres from "postgres";
import { testUrls, uniqueName } from "../../../../test/support/env.ts";
import { createPartnerAdmin } from "../../src/admin/partner-admin.ts";
import {
  freePort,
  guardLines,
  moveGroupToEnd,
  spawnService,
  waitUntil,
  type ServiceProcess,
} from "./support/fault-harness.ts";
import { createGatedProxy, endpointOfUrl, viaProxy, type GatedProxy } from "./support/gated-proxy.ts";

const urls = testUrls();
const started: ServiceProcess[] = [];
const proxies: GatedProxy[] = [];
const sql = postgres(urls.DATABASE_URL, { max: 2, onnotice: () => {} });
const opensearch = new OpenSearchClient({ node: urls.OPENSEARCH_URL });
const alias = uniqueName("boot-listings");

afterAll(async () => {
  for (const p of started) await p.stop().catch(() => {});
  for (const p of proxies) await p.close();
  await opensearch.indices.delete({ index: `${alias}-v*` }).catch(() => {});
  await opensearch.close();
  await sql.end({ timeout: 5 });
}, 60_000);

async function timed(url: string, init: RequestInit = {}) {
  const began = performance.now();
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  return {
    status: res.status,
    ms: performance.now() - began,
    retryAfter: res.headers.get("retry-after"),
    body: await res.text(),
  };
}

test("with every dependency down, the services boot and answer 503 fast; once the dependencies answer they work without a restart", async () => {
  const names = ["DATABASE_URL", "REDIS_URL", "KAFKA_BROKERS", "OPENSEARCH_URL"] as const;
  const env: Record<string, string> = { LOG_LEVEL: "warn" };
  for (const name of names) {
    const proxy = await createGatedProxy(endpointOfUrl(urls[name]));
    proxies.push(proxy);
    env[name] = viaProxy(urls[name], proxy);
  }
  const redis = new Redis(urls.REDIS_URL, { lazyConnect: true });
  const partner = await createPartnerAdmin({ sql, redis }).createPartner({
    name: uniqueName("boot-partner"),
    leadTracking: false,
  });
  redis.disconnect();
  const kafka = new Kafka({
    clientId: uniqueName("boot-test"),
    brokers: urls.KAFKA_BROKERS.split(","),
    logLevel: logLevel.NOTHING,
  });
  const groups = {
    indexer: uniqueName("boot-indexer"),
    media: uniqueName("boot-media"),
    leads: uniqueName("boot-leads"),
  };
  // Media and leads are stopped before Kafka answers, so only the indexer's group consumes anything.
  await moveGroupToEnd(kafka, groups.indexer);

  const ports = {
    api: await freePort(),
    apiHealth: await freePort(),
    indexer: await freePort(),
    relay: await freePort(),
    media: await freePort(),
    leads: await freePort(),
  };
  const spawnStarted = Date.now();
  const api = await spawnService(
    "api",
    {
      ...env,
      API_PORT: String(ports.api),
      API_HEALTH_PORT: String(ports.apiHealth),
      OUTBOX_RELAY_ENABLED: "true",
      OPENSEARCH_INDEX_ALIAS: alias,
    },
    ports.apiHealth,
  );
  started.push(api);
  const indexer = await spawnService(
    "indexer",
    { ...env, HEALTH_PORT: String(ports.indexer), OPENSEARCH_INDEX_ALIAS: alias, INDEXER_GROUP_ID: groups.indexer },
    ports.indexer,
  );
  started.push(indexer);
  const relay = await spawnService(
    "outbox-relay",
    { ...env, HEALTH_PORT: String(ports.relay) },
    ports.relay,
    join("services", "api", "src", "relay-main.ts"),
  );
  started.push(relay);
  const media = await spawnService(
    "media",
    { ...env, HEALTH_PORT: String(ports.media), MEDIA_CONSUMER_GROUP: groups.media, MEDIA_DIR: ".data/media-test" },
    ports.media,
  );
  started.push(media);
  const leads = await spawnService(
    "leads",
    { ...env, HEALTH_PORT: String(ports.leads), LEADS_GROUP_PREFIX: groups.leads },
    ports.leads,
  );
  started.push(leads);
  if (process.env.FAULT_DEBUG) console.error(`spawned in ${Date.now() - spawnStarted} ms`);

  const t0 = Date.now();
  const mark = (what: string) => process.env.FAULT_DEBUG && console.error(`${Date.now() - t0} ms: ${what}`);
  const base = `http://127.0.0.1:${ports.api}`;
  const health = `http://127.0.0.1:${ports.apiHealth}`;
  const auth = { authorization: `Bearer ${partner.apiKey}`, "content-type": "application/json" };
  const listingBody = (brokerExternalId: string) =>
    JSON.stringify({
      brokerExternalId,
      status: "FOR_SALE",
      businessType: "Bakery",
      title: "Booted during an outage",
      location: { city: "Austin", state: "TX", country: "US", visibility: "SHOW_CITY_STATE" },
    });

  // All down: writes, the partner health check (its key is in no cache) and readiness answer 503 at once.
  await Bun.sleep(1500);
  const answers = [];
  for (let i = 0; i < 5; i++) {
    answers.push(
      await timed(`${base}/partner/v1/brokers/${uniqueName("b")}`, {
        method: "PUT",
        headers: auth,
        body: JSON.stringify({ name: "B", email: "b@example.com" }),
      }),
    );
    answers.push(await timed(`${base}/partner/v1/health`, { headers: auth }));
  }
  for (const a of answers) {
    expect(a.status).toBe(503);
    expect(a.ms).toBeLessThan(2000);
    expect(Number(a.retryAfter)).toBeGreaterThan(0);
    expect(JSON.parse(a.body)).toEqual({ status: "error", error: expect.stringContaining("temporarily unavailable") });
  }
  const readyz = await timed(`${health}/readyz`);
  expect(readyz.status).toBe(503);
  expect(readyz.ms).toBeLessThan(2000);
  expect(JSON.parse(readyz.body)).toEqual({
    status: "not ready",
    service: "api",
    checks: expect.objectContaining({ postgres: "failing", redis: "failing" }),
    degraded: expect.arrayContaining(["redis"]),
  });
  expect(readyz.body).not.toMatch(/ECONN|refused|127\.0\.0\.1/i);
  for (const p of [api, indexer, relay, media, leads]) {
    expect((await timed(`http://127.0.0.1:${p.port}/healthz`)).status).toBe(200);
    const worker = await timed(`http://127.0.0.1:${p.port}/readyz`);
    expect(worker.status).toBe(503);
    expect(worker.body).not.toMatch(/ECONN|refused|127\.0\.0\.1/i);
  }

  mark("answers checked");
  // A worker waiting for Kafka at boot stops cleanly when asked.
  expect(await media.stop()).toBe(0);
  expect(await leads.stop()).toBe(0);

  mark("workers stopped");
  // Dependencies back: everything starts working by itself.
  const openedAt = Date.now();
  for (const p of proxies) await p.open();
  await waitUntil("the API to be ready", async () => (await fetch(`${health}/readyz`)).ok, 15_000);
  const brokerId = uniqueName("boot-broker");
  expect(
    (
      await timed(`${base}/partner/v1/brokers/${brokerId}`, {
        method: "PUT",
        headers: auth,
        body: JSON.stringify({ name: "Boot Broker", email: "boot@example.com" }),
      })
    ).status,
  ).toBe(201);
  const created = await timed(`${base}/partner/v1/listings/${uniqueName("boot-listing")}`, {
    method: "PUT",
    headers: auth,
    body: listingBody(brokerId),
  });
  expect(created.status).toBe(201);
  const listingId = JSON.parse(created.body).serviceListingId as number;
  // Published by a relay (the API's or the relay process's) and indexed by the indexer that booted without Kafka.
  await waitUntil(
    `listing ${listingId} to be indexed`,
    async () => {
      const [row] = await sql`SELECT index_state, indexed_version FROM listings WHERE id = ${listingId}`;
      if (row?.index_state !== "indexed" || row.indexed_version !== 1) return false;
      const doc = await opensearch.get({ index: alias, id: String(listingId) });
      return (doc.body as { _source: { title?: string } })._source.title === "Booted during an outage";
    },
    60_000,
  );
  for (const p of [indexer, relay])
    await waitUntil(`${p.name} to be ready`, async () => (await fetch(`http://127.0.0.1:${p.port}/readyz`)).ok, 30_000);
  if (process.env.FAULT_DEBUG) console.error(`working ${Date.now() - openedAt} ms after the dependencies came back`);

  for (const p of [api, indexer, relay]) {
    expect(p.exitCode()).toBeNull();
    expect(guardLines(p)).toEqual([]);
  }
}, 150_000);

test("an API with its relay off never contacts Kafka: it creates no topics, and is ready and writes while Kafka is unreachable", async () => {
  // A port that counts every connection to it (and closes them): the API's only Kafka broker.
  const net = await import("node:net");
  let connections = 0;
  const kafkaTrap = net.createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => kafkaTrap.listen(0, "127.0.0.1", resolve));
  try {
    const port = await freePort();
    const healthPort = await freePort();
    const api = await spawnService(
      "api",
      {
        API_PORT: String(port),
        API_HEALTH_PORT: String(healthPort),
        OUTBOX_RELAY_ENABLED: "false",
        KAFKA_BROKERS: `127.0.0.1:${(kafkaTrap.address() as { port: number }).port}`,
      },
      healthPort,
    );
    started.push(api);
    const base = `http://127.0.0.1:${port}`;
    // Polled: just after boot the Redis client may still be connecting (reported as degraded, still ready).
    const ready = await waitUntil(
      "the API to report every check it has ok",
      async () => {
        const probe = await timed(`http://127.0.0.1:${healthPort}/readyz`);
        return probe.status === 200 && JSON.parse(probe.body).checks?.redis === "ok" ? probe : null;
      },
      10_000,
    );
    expect([ready.status, JSON.parse(ready.body)]).toEqual([
      200,
      { status: "ready", service: "api", checks: { postgres: "ok", redis: "ok" } },
    ]);
    const redis = new Redis(urls.REDIS_URL, { lazyConnect: true });
    const partner = await createPartnerAdmin({ sql, redis }).createPartner({
      name: uniqueName("relay-off-partner"),
      leadTracking: false,
    });
    redis.disconnect();
    const put = await timed(`${base}/partner/v1/brokers/${uniqueName("b")}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${partner.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Relay Off", email: "relay.off@example.com" }),
    });
    expect(put.status).toBe(201);
    await Bun.sleep(1000);
    expect(connections).toBe(0);
    expect(api.exitCode()).toBeNull();
  } finally {
    kafkaTrap.close();
  }
}, 60_000);
