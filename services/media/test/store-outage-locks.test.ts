// The object store going away just as a job confirms its files (markReady's check under the garbage collector's
// name locks) must not pin PostgreSQL for the outage: the job waits for the store outside any transaction, so no
// session of the media service sits idle in a transaction and the listing's lock stays free for its sibling
// photos. The store is an S3Proxy of this test's own (test/support/private-s3.ts), stopped at that very moment.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createEnvReader, createMediaStorage, readMediaStorageConfig, type MediaStorage } from "@pss/service-kit";
import postgres from "postgres";
import { sample, startApi, type ApiHarness, type Partner } from "../../api/test/support/harness.ts";
import { testUrls, uniqueName } from "../../../test/support/env.ts";
import { privateS3Unavailable, startPrivateS3, type PrivateS3 } from "../../../test/support/private-s3.ts";
import { startImageServer, type ImageServer } from "./support/image-server.ts";
import { startMedia, until, type MediaHarness } from "./support/media-harness.ts";

const unavailable = privateS3Unavailable();
if (unavailable) console.warn(`store-outage-locks.test.ts skipped: ${unavailable}`);

let s3: PrivateS3;
let images: ImageServer;
let api: ApiHarness;
let media: MediaHarness;
let partner: Partner;
let sql: postgres.Sql;
let waitingNow = 0;
/** Set when the first confirmation of a stored file starts: the store is stopped before it is asked. */
let stopBeforeFirstCheck = true;
let storeStopped: Promise<void> | null = null;

beforeAll(async () => {
  if (unavailable) return;
  s3 = await startPrivateS3();
  const r = createEnvReader({ ...s3.env, S3_PREFIX: `${uniqueName("locks")}/` });
  const config = readMediaStorageConfig(r);
  r.done();
  const real = createMediaStorage(config);
  // The real store, stopped for real the moment a job first asks whether a file it stored is (still) there.
  const storage: MediaStorage = {
    kind: real.kind,
    put: (name, bytes, type) => real.put(name, bytes, type),
    async exists(name) {
      if (stopBeforeFirstCheck) {
        stopBeforeFirstCheck = false;
        storeStopped = s3.stop();
      }
      await storeStopped;
      return real.exists(name);
    },
    delete: (name) => real.delete(name),
    list: () => real.list(),
    stat: (name) => real.stat(name),
    read: (name) => real.read(name),
    presign: (name, s) => real.presign(name, s),
    removeAbandonedWrites: (olderThan) => real.removeAbandonedWrites(olderThan),
    check: () => real.check(),
  };
  images = await startImageServer();
  api = await startApi({ mediaStorage: real });
  partner = await api.createPartner();
  media = await startMedia({
    partners: [partner.partnerId],
    storage,
    env: { MEDIA_ALLOWED_HOSTS: `127.0.0.1:${images.port}`, MEDIA_RETRY_POLL_MS: "100" },
    outageBackoff: { baseMs: 200, maxMs: 1_000 },
    outageMetrics: { waited: () => {}, waiting: (_d, delta) => void (waitingNow += delta) },
  });
  sql = postgres(testUrls().DATABASE_URL, { max: 2, onnotice: () => {} });
}, 90_000);

afterAll(async () => {
  await media?.stop();
  await api?.stop();
  images?.stop();
  await sql?.end({ timeout: 5 });
  await s3?.destroy();
});

test.skipIf(unavailable !== null)(
  "with the store stopped while a finished image confirms its files, no media session holds a transaction or the listing's lock; the image ends ready once the store is back",
  async () => {
    const brokerId = uniqueName("broker");
    expect((await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
    const externalId = uniqueName("listing");
    const url = images.url(`/photo-3.jpg?t=${externalId}`);
    const created = await partner.put(
      `/partner/v1/listings/${externalId}`,
      sample.listing(brokerId, { photos: [{ url, sortKey: 1 }] }),
    );
    expect(created.status).toBe(201);
    const listingId = String(created.body.serviceListingId);

    // The job stored its variants, then found the store gone when confirming them: it waits.
    await until("the job waiting for the store", () => waitingNow > 0, 60_000);
    // Sampled over a few of its tries (backoff 200 ms to 1 s): never idle in a transaction.
    const deadline = Date.now() + 3_000;
    while (Date.now() < deadline) {
      const held = await sql<{ state: string; query: string }[]>`
        SELECT state, query FROM pg_stat_activity
        WHERE application_name = ${media.groupId} AND state LIKE 'idle in transaction%'`;
      expect([...held]).toEqual([]);
      await Bun.sleep(100);
    }
    // The listing's photo lock (what a sibling photo finishing needs) is free: taken at once, not after the outage.
    const tookLock = await sql.begin(async (tx) => {
      await tx`SET LOCAL lock_timeout = '2s'`;
      await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`pss.listing-photos:${listingId}`}, 0))`;
      return true;
    });
    expect(tookLock).toBe(true);
    const [pending] = await sql`SELECT state FROM listing_photos WHERE listing_id = ${listingId}::bigint`;
    expect(pending?.state).toBe("pending");

    await s3.start();
    const settled = await until(
      "the photo to settle",
      async () => {
        const [row] = await sql<{ state: string; attempts: number }[]>`
          SELECT state, attempts FROM listing_photos WHERE listing_id = ${listingId}::bigint`;
        return row && row.state !== "pending" ? row : null;
      },
      60_000,
    );
    // Ready, on its one attempt, downloaded (and so processed) once.
    expect(settled).toEqual({ state: "ready", attempts: 1 });
    expect(images.hits(new URL(url).pathname + new URL(url).search)).toBe(1);
    expect(waitingNow).toBe(0);
  },
  150_000,
);
