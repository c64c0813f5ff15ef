// Benchmark: media throughput with two media instances against one, same run. Each instance is a real process
// (`bun services/media/src/main.ts`, one image at a time: MEDIA_CONCURRENCY=1, the share of one core), in a
// consumer group of its own per measurement, storing in the object store (the local S3 server; a directory when
// none is configured). A measurement: start the instances, wait until they have split the partitions, process
// a warm-up photo, then time partner PUTs of 16 listings x 2 photos until every photo is ready in PostgreSQL.
// Rounds alternate one and two instances; the best of each counts. Prints one JSON line on stdout.
//   bun bench/media-instances.ts
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kafka, logLevel } from "kafkajs";
import postgres from "postgres";
import { Topics } from "@pss/contracts";
import { migrate } from "@pss/database";
import { createEnvReader, createMediaStorage, readMediaStorageConfig } from "@pss/service-kit";
import { up } from "../infra/src/index.ts";
import { makeTexturedPicture } from "../services/media/test/support/image-server.ts";

const LISTINGS = 16;
const PHOTOS_PER_LISTING = 2;
const IMAGES = LISTINGS * PHOTOS_PER_LISTING;
const ROUNDS = 2;
/** Two instances with a core's share each should do well over one; below this, something serialises them. */
const TARGET = 1.5;

// OpenSearch plays no part here: never start it just for this benchmark.
const urls = await up({ ...process.env, OPENSEARCH_URL: process.env.OPENSEARCH_URL ?? "http://127.0.0.1:9250" });
Object.assign(process.env, urls);
const admin = postgres(urls.DATABASE_URL, { max: 1, onnotice: () => {} });
await migrate(admin).finally(() => admin.end());

// Imported after the environment is set: the harnesses read it.
const { sample, startApi } = await import("../services/api/test/support/harness.ts");
const { moveGroupToEnd, waitUntil } = await import("../services/api/test/faults/support/fault-harness.ts");
const { startInstances, waitForSplit } = await import("../test/support/consumer-instances.ts");

// Every measurement gets images of its own (a random colour each): no run finds its variants already stored.
const warmUp = await makeTexturedPicture(1600, 1200);
const sets: Buffer[][] = [];
for (let m = 0; m < ROUNDS * 2; m++)
  sets.push(await Promise.all(Array.from({ length: IMAGES }, () => makeTexturedPicture(1600, 1200))));
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: (req) => {
    const m = /^\/(w|\d+)\/(\d+)\.jpg$/.exec(new URL(req.url).pathname);
    const bytes = m ? (m[1] === "w" ? warmUp : sets[Number(m[1])]?.[Number(m[2])]) : undefined;
    return bytes
      ? new Response(bytes, { headers: { "content-type": "image/jpeg" } })
      : new Response("no", { status: 404 });
  },
});
const url = (set: number | "w", i: number) => `http://127.0.0.1:${server.port}/${set}/${i}.jpg`;

const mediaDir = urls.S3_ENDPOINT ? null : await mkdtemp(join(tmpdir(), "pss-bench-media-"));
const storageEnv: Record<string, string> = mediaDir
  ? { MEDIA_STORAGE: "local", MEDIA_DIR: mediaDir }
  : {
      MEDIA_STORAGE: "s3",
      S3_ENDPOINT: urls.S3_ENDPOINT!,
      S3_BUCKET: urls.S3_BUCKET!,
      S3_REGION: urls.S3_REGION ?? "us-east-1",
      S3_ACCESS_KEY_ID: urls.S3_ACCESS_KEY_ID!,
      S3_SECRET_ACCESS_KEY: urls.S3_SECRET_ACCESS_KEY!,
      S3_PREFIX: `bench-media-instances-${Date.now().toString(36)}/`,
    };

const api = await startApi();
const kafka = new Kafka({
  clientId: "bench-media-instances",
  brokers: urls.KAFKA_BROKERS.split(","),
  logLevel: logLevel.NOTHING,
});
const partner = await api.createPartner();
const brokerId = `bench-broker-${crypto.randomUUID()}`;
await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker());

const readyCount = async () => {
  const [row] = await api.sql`
    SELECT count(*) FILTER (WHERE p.state = 'ready')::int AS ready, count(*) FILTER (WHERE p.state = 'failed')::int AS failed
    FROM listing_photos p JOIN listings l ON l.id = p.listing_id WHERE l.partner_id = ${partner.partnerId}`;
  if (row!.failed > 0) throw new Error(`${row!.failed} benchmark photos failed`);
  return row!.ready as number;
};

/** Images/s of `instances` media processes on photo set `set`, start-up and group joins excluded. */
async function measure(instances: number, set: number): Promise<number> {
  const group = `bench-media-${instances}-${crypto.randomUUID()}`;
  await moveGroupToEnd(kafka, group);
  const procs = await startInstances("media", instances, {
    ...storageEnv,
    MEDIA_CONSUMER_GROUP: group,
    MEDIA_CONCURRENCY: "1",
    MEDIA_SHARP_THREADS: "1",
    MEDIA_GC_INTERVAL_MS: "0",
    MEDIA_ALLOWED_HOSTS: `127.0.0.1:${server.port}`,
    // The group's default timing, as deployed.
    KAFKA_SESSION_TIMEOUT_MS: "30000",
  });
  try {
    await waitForSplit(procs, group, Topics.listingEvents.name, Topics.listingEvents.partitions);
    const before = await readyCount();
    await partner.put(
      `/partner/v1/listings/bench-warm-up-${crypto.randomUUID()}`,
      sample.listing(brokerId, { photos: [{ url: url("w", set), sortKey: 1 }] }),
    );
    await waitUntil("the warm-up photo", async () => (await readyCount()) === before + 1, 60_000);
    const began = performance.now();
    await Promise.all(
      Array.from({ length: LISTINGS }, (_, l) =>
        partner.put(
          `/partner/v1/listings/bench-${crypto.randomUUID()}`,
          sample.listing(brokerId, {
            photos: Array.from({ length: PHOTOS_PER_LISTING }, (_, p) => ({
              url: url(set, l * PHOTOS_PER_LISTING + p),
              sortKey: p + 1,
            })),
          }),
        ),
      ),
    );
    await waitUntil("every photo ready", async () => (await readyCount()) === before + 1 + IMAGES, 300_000);
    return IMAGES / ((performance.now() - began) / 1000);
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
  }
}

let one = 0;
let two = 0;
try {
  for (let r = 0; r < ROUNDS; r++) {
    one = Math.max(one, await measure(1, r * 2));
    two = Math.max(two, await measure(2, r * 2 + 1));
  }
} finally {
  await api.stop();
  server.stop(true);
  if (mediaDir) await rm(mediaDir, { recursive: true, force: true });
  else {
    // The variants this run stored, under its own key prefix.
    const storage = createMediaStorage(readMediaStorageConfig(createEnvReader(storageEnv)));
    const names: string[] = [];
    for await (const f of storage.list()) names.push(f.name);
    for (const name of names) await storage.delete(name).catch(() => {});
  }
}
const round = (n: number) => Math.round(n * 100) / 100;
console.log(
  JSON.stringify({
    scenario: "media throughput, two instances vs one",
    figure: round(two),
    baseline: round(one),
    baselineLabel: "one instance, same run",
    ratio: round(two / one),
    target: TARGET,
    unit: "images/s",
    notes: `MEDIA_CONCURRENCY=1 per instance; ${LISTINGS} listings x ${PHOTOS_PER_LISTING} photos (1600x1200 photo-like JPEG) per measurement; ${mediaDir ? "local directory" : "object store"}; best of ${ROUNDS} alternating rounds`,
  }),
);
process.exit(0);
