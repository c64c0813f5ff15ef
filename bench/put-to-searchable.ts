// PUT-to-searchable: how long after a partner's PUT a new listing is found by buyers' search, while other
// partners keep writing at 200 PUT/s. Starts the infrastructure (local runner or configured URLs), the real API
// and the real indexer as child processes on loopback, runs a bounded load, prints ONE JSON line on stdout.
//   bun bench/put-to-searchable.ts            (BENCH_SECONDS=20, BENCH_RATE=200 to change the load)
import { Client } from "@opensearch-project/opensearch";
import Redis from "ioredis";
import { Kafka, logLevel } from "kafkajs";
import postgres from "postgres";
import { ALL_TOPICS, Topics } from "@pss/contracts";
import { migrate } from "@pss/database";
import { ensureTopics } from "@pss/service-kit";
import { up } from "../infra/src/index.ts";
import { createPartnerAdmin } from "../services/api/src/admin/partner-admin.ts";
import { localWebhookKeyEnv } from "../scripts/local-webhook-key.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const RATE = Number(process.env.BENCH_RATE ?? 200);
const TARGET_MS = 2000;
const PROBE_TIMEOUT_MS = 15_000;
const BACKGROUND_LISTINGS = 300;
const log = (msg: string) => process.stderr.write(`put-to-searchable: ${msg}\n`);
const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

async function freePort(): Promise<number> {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

async function waitReady(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (
    !(await fetch(url).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (Date.now() > deadline) throw new Error(`${url} not ready within ${timeoutMs / 1000} s`);
    await Bun.sleep(100);
  }
}

function spawnService(entry: string, env: Record<string, string>) {
  return Bun.spawn([process.execPath, entry], {
    cwd: ROOT,
    env: { ...process.env, ...env, LOG_LEVEL: "warn" },
    stdout: "ignore",
    stderr: "inherit",
  });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const urls = await up();
const sql = postgres(urls.DATABASE_URL, { max: 4, onnotice: () => {} });
await migrate(sql);
const kafka = new Kafka({
  clientId: `bench-${tag}`,
  brokers: urls.KAFKA_BROKERS.split(","),
  logLevel: logLevel.NOTHING,
});
await ensureTopics(kafka, ALL_TOPICS);

// A fresh alias and consumer group, starting at the end of the topics: only this run's events are indexed.
const alias = `bench-listings-${tag}`;
const groupId = `bench-indexer-${tag}`;
const admin = kafka.admin();
await admin.connect();
for (const topic of [Topics.listingEvents.name, Topics.brokerEvents.name]) {
  const ends = await admin.fetchTopicOffsets(topic);
  await admin.setOffsets({ groupId, topic, partitions: ends.map((p) => ({ partition: p.partition, offset: p.high })) });
}
await admin.disconnect();

const apiPort = await freePort();
const apiHealthPort = await freePort();
const indexerPort = await freePort();
// The API needs a WEBHOOK_SECRET_KEY: the one `npm start` uses (generated once under .data/) unless set.
const common = { ...urls, ...localWebhookKeyEnv(process.env, `${ROOT}.data`), OPENSEARCH_INDEX_ALIAS: alias };
const api = spawnService("services/api/src/main.ts", {
  ...common,
  API_PORT: String(apiPort),
  API_HEALTH_PORT: String(apiHealthPort),
});
const indexer = spawnService("services/indexer/src/main.ts", {
  ...common,
  HEALTH_PORT: String(indexerPort),
  INDEXER_GROUP_ID: groupId,
});
const base = `http://127.0.0.1:${apiPort}`;
const redis = new Redis(urls.REDIS_URL, { lazyConnect: true });

async function cleanup() {
  for (const p of [api, indexer]) p.kill("SIGTERM");
  await Promise.race([Promise.all([api.exited, indexer.exited]), Bun.sleep(20_000)]);
  for (const p of [api, indexer]) p.kill("SIGKILL");
  const os = new Client({ node: urls.OPENSEARCH_URL });
  await os.indices.delete({ index: `${alias}-v*` }).catch(() => {});
  await os.close();
  await sql.end({ timeout: 5 });
  redis.disconnect();
}

try {
  await Promise.all([
    waitReady(`http://127.0.0.1:${apiHealthPort}/readyz`),
    waitReady(`http://127.0.0.1:${indexerPort}/readyz`),
  ]);
  const partner = await createPartnerAdmin({ sql, redis }).createPartner({ name: `bench ${tag}`, leadTracking: false });
  const headers = { "content-type": "application/json", authorization: `Bearer ${partner.apiKey}` };
  const put = (path: string, body: unknown) =>
    fetch(base + path, { method: "PUT", headers, body: JSON.stringify(body) });
  const listing = (n: number, title: string, price: number) => ({
    brokerExternalId: "bench-broker",
    status: "FOR_SALE",
    businessType: ["Restaurant", "Retail", "Service Business", "E-commerce", "Manufacturing"][n % 5],
    title,
    description: "Established business with loyal customers, trained staff and a renewable lease. Seller will train.",
    location: {
      streetAddress1: `${100 + n} Congress Ave`,
      city: "Austin",
      state: "TX",
      postalCode: "78701",
      country: "US",
      visibility: "SHOW_CITY_STATE",
    },
    financials: { askingPrice: price, revenue: 900_000, sde: 180_000 },
    photos: [{ url: `https://images.partner.example.com/${n}/1.jpg`, sortKey: 1 }],
  });

  if (
    (await put("/partner/v1/brokers/bench-broker", { name: "Bench Broker", email: "bench@brokerage.example.com" }))
      .status !== 201
  )
    throw new Error("broker PUT failed");
  log(`creating ${BACKGROUND_LISTINGS} background listings`);
  for (let i = 0; i < BACKGROUND_LISTINGS; i += 25) {
    await Promise.all(
      Array.from({ length: 25 }, (_, j) =>
        put(`/partner/v1/listings/bg-${i + j}`, listing(i + j, `Background business ${i + j}`, 250_000)).then((r) =>
          r.arrayBuffer(),
        ),
      ),
    );
  }

  // Background load: RATE updates per second to existing listings, each changing the asking price.
  let stopLoad = false;
  let sent = 0;
  let failed = 0;
  let inFlight = 0;
  const load = (async () => {
    const started = performance.now();
    while (!stopLoad) {
      const due = Math.floor(((performance.now() - started) / 1000) * RATE);
      while (sent < due && inFlight < 400) {
        const n = sent % BACKGROUND_LISTINGS;
        sent++;
        inFlight++;
        put(`/partner/v1/listings/bg-${n}`, listing(n, `Background business ${n}`, 250_000 + sent))
          .then(
            (r) => (r.ok ? r.arrayBuffer() : (failed++, r.arrayBuffer())),
            () => failed++,
          )
          .finally(() => inFlight--);
      }
      await Bun.sleep(5);
    }
    return sent / ((performance.now() - started) / 1000);
  })();

  log(`load at ${RATE} PUT/s; probing for ${SECONDS} s`);
  await Bun.sleep(2000); // warm-up under load
  const latencies: number[] = [];
  const deadline = Date.now() + SECONDS * 1000;
  for (let i = 0; Date.now() < deadline; i++) {
    const word = `probe${tag}x${i}`;
    const t0 = performance.now();
    const res = await put(`/partner/v1/listings/probe-${i}`, listing(10_000 + i, `Corner bakery ${word}`, 300_000));
    if (res.status !== 201) throw new Error(`probe PUT answered ${res.status}`);
    const { serviceListingId } = (await res.json()) as { serviceListingId: number };
    let found = false;
    while (!found && performance.now() - t0 < PROBE_TIMEOUT_MS) {
      const r = await fetch(`${base}/v1/listings?q=${word}&limit=1`);
      const body = (await r.json()) as { results?: { serviceListingId: number }[] };
      found = body.results?.some((x) => x.serviceListingId === serviceListingId) ?? false;
      if (!found) await Bun.sleep(20);
    }
    latencies.push(found ? performance.now() - t0 : PROBE_TIMEOUT_MS);
    await Bun.sleep(200);
  }
  stopLoad = true;
  const loadRate = await load;
  while (inFlight > 0) await Bun.sleep(20);

  const sorted = [...latencies].sort((a, b) => a - b);
  const p50 = Math.round(percentile(sorted, 50));
  const p95 = Math.round(percentile(sorted, 95));
  log(`${latencies.length} probes; background ${loadRate.toFixed(0)} PUT/s, ${failed} failed PUTs`);
  console.log(
    JSON.stringify({
      scenario: "PUT-to-searchable",
      figure: p95,
      p50,
      p95,
      target: TARGET_MS,
      unit: "ms",
      pass: p95 <= TARGET_MS && failed === 0,
      samples: latencies.length,
      loadPerSecond: Math.round(loadRate),
    }),
  );
} finally {
  await cleanup();
}
