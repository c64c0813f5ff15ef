// Benchmark: serving an image variant with MEDIA_DELIVERY=api against MEDIA_DELIVERY=redirect, same run. Two API
// processes (one per mode) read the same object from the object store (the local S3 server); a closed loop of 16
// concurrent clients in this process (not the API's) GETs /media/<name> for the measurement's duration:
// - api: the API streams the bytes from the bucket (200);
// - redirect: the API answers 302 to a presigned URL and the client follows it to the bucket (302 + 200), what a
//   browser does on its first visit;
// and, as context in the notes, the API's share of redirect (the 302 alone) and a revisit in api mode (304 to
// If-None-Match, no storage read). Requests/s of complete fetches; rounds alternate, best of each.
// Prints one JSON line on stdout.
//   bun bench/media-delivery.ts
import { migrate } from "@pss/database";
import postgres from "postgres";
import { contentName, createEnvReader, createMediaStorage, readMediaStorageConfig } from "@pss/service-kit";
import { up } from "../infra/src/index.ts";
import { startApiOnly, type ApiProcess } from "./lib/processes.ts";
import { createImageProcessor } from "../services/media/src/images/image-processor.ts";
import { makeTexturedPicture } from "../services/media/test/support/image-server.ts";

const CONNECTIONS = 16;
const ROUNDS = 2;
const durationSeconds = Number(process.env.BENCH_DURATION ?? 10);

const urls = await up({ ...process.env, OPENSEARCH_URL: process.env.OPENSEARCH_URL ?? "http://127.0.0.1:9250" });
if (!urls.S3_ENDPOINT) {
  console.log(
    JSON.stringify({
      scenario: "variant GET, redirect vs api",
      figure: NaN,
      notes: "no object store (S3_ENDPOINT): redirect needs one",
    }),
  );
  process.exit(1);
}
const admin = postgres(urls.DATABASE_URL, { max: 1, onnotice: () => {} });
await migrate(admin).finally(() => admin.end());

// One realistic variant (an 800 px WebP, as the media service makes them), under a key prefix of this run's.
const storageEnv = {
  MEDIA_STORAGE: "s3",
  S3_ENDPOINT: urls.S3_ENDPOINT,
  S3_BUCKET: urls.S3_BUCKET!,
  S3_REGION: urls.S3_REGION ?? "us-east-1",
  S3_ACCESS_KEY_ID: urls.S3_ACCESS_KEY_ID!,
  S3_SECRET_ACCESS_KEY: urls.S3_SECRET_ACCESS_KEY!,
  S3_PREFIX: `bench-delivery-${Date.now().toString(36)}/`,
};
const storage = createMediaStorage(readMediaStorageConfig(createEnvReader(storageEnv)));
const processed = await createImageProcessor({ maxInputPixels: 50_000_000 }).photo(
  await makeTexturedPicture(1600, 1200),
);
const variant = processed.variants.find((v) => v.format === "webp" && v.width === 800) ?? processed.variants[0]!;
const bytes = variant.bytes;
const name = contentName(bytes, "webp");
await storage.put(name, bytes, "image/webp");

interface Rate {
  perSecond: number;
  errors: number;
}

/** A closed loop: CONNECTIONS clients, each fetching again as soon as its last fetch (body read) finished. */
async function load(url: string, init: RequestInit, expectStatus: number): Promise<Rate> {
  let done = 0;
  let errors = 0;
  const endAt = performance.now() + durationSeconds * 1000;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < endAt) {
        try {
          const res = await fetch(url, init);
          await res.arrayBuffer();
          if (res.status === expectStatus) done++;
          else errors++;
        } catch {
          errors++;
        }
      }
    }),
  );
  return { perSecond: done / ((performance.now() - began) / 1000), errors };
}

const apis: Record<"api" | "redirect", ApiProcess | null> = { api: null, redirect: null };
const best = { api: 0, redirect: 0, redirectAnswer: 0, revisit: 0 };
let errors = 0;
try {
  for (const mode of ["api", "redirect"] as const)
    apis[mode] = await startApiOnly({ ...storageEnv, MEDIA_DELIVERY: mode, OUTBOX_RELAY_ENABLED: "false" });
  const path = `/media/${name}`;
  const etag = `"${name.slice(0, 64)}"`;
  // Warm-up: connections open, the object in the store's page cache.
  await load(apis.api!.url + path, {}, 200);
  await load(apis.redirect!.url + path, { redirect: "follow" }, 200);
  for (let r = 0; r < ROUNDS; r++) {
    const api = await load(apis.api!.url + path, {}, 200);
    const redirect = await load(apis.redirect!.url + path, { redirect: "follow" }, 200);
    const answer = await load(apis.redirect!.url + path, { redirect: "manual" }, 302);
    const revisit = await load(apis.api!.url + path, { headers: { "if-none-match": etag } }, 304);
    errors += api.errors + redirect.errors + answer.errors + revisit.errors;
    best.api = Math.max(best.api, api.perSecond);
    best.redirect = Math.max(best.redirect, redirect.perSecond);
    best.redirectAnswer = Math.max(best.redirectAnswer, answer.perSecond);
    best.revisit = Math.max(best.revisit, revisit.perSecond);
  }
} finally {
  await apis.api?.stop();
  await apis.redirect?.stop();
  await storage.delete(name).catch(() => {});
}
const round = (n: number) => Math.round(n * 10) / 10;
console.log(
  JSON.stringify({
    scenario: "variant GET (first visit), MEDIA_DELIVERY=redirect vs api",
    figure: round(best.redirect),
    baseline: round(best.api),
    baselineLabel: "MEDIA_DELIVERY=api, same run",
    ratio: Math.round((best.redirect / best.api) * 100) / 100,
    unit: "req/s",
    notes: `${bytes.length} B WebP, ${CONNECTIONS} connections, ${durationSeconds} s x ${ROUNDS} rounds; redirect = 302 + presigned GET from the store; the API's 302 alone ${round(best.redirectAnswer)} req/s; api revisit (304, no storage read) ${round(best.revisit)} req/s; non-expected answers ${errors}`,
  }),
);
process.exit(errors > 0 ? 1 : 0);
