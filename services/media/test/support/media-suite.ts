// The whole path on real servers: partner PUT → outbox → Kafka → media service → storage and PostgreSQL →
// partner read-back, with the processed files served by the API. Images come from a local host that also
// misbehaves on purpose. Defined once, run for each storage implementation (media-local.test.ts,
// media-s3.test.ts): what depends on storage runs for both, the download and consumer rules once.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { Topics } from "@pss/contracts";
import { sample, startApi, type ApiHarness, type Partner } from "../../../api/test/support/harness.ts";
import { uniqueName } from "../../../../test/support/env.ts";
import { startImageServer, type ImageServer } from "./image-server.ts";
import {
  createTestStorage,
  startMedia,
  TEST_PUBLIC_BASE_URL,
  until,
  type MediaHarness,
  type StorageKind,
  type TestStorage,
} from "./media-harness.ts";

export function defineMediaSuite(kind: StorageKind, opts: { storageIndependent: boolean }) {
  let images: ImageServer;
  let api: ApiHarness;
  let media: MediaHarness;
  let partner: Partner;
  let brokerId: string;
  let stored: TestStorage;
  /** Tests whose outcome does not depend on where files are stored run in one suite only. */
  const independent = (name: string, fn: () => Promise<void>, timeout?: number) => {
    if (opts.storageIndependent) test(name, fn, timeout);
  };

  beforeAll(async () => {
    stored = await createTestStorage(kind);
    images = await startImageServer();
    api = await startApi({ mediaStorage: stored.storage });
    partner = await api.createPartner();
    media = await startMedia({
      partners: [partner.partnerId],
      storage: stored.storage,
      env: {
        ...stored.env,
        MEDIA_ALLOWED_HOSTS: `127.0.0.1:${images.port}`,
        MEDIA_MAX_DOWNLOAD_BYTES: String(2 * 1024 * 1024),
        MEDIA_CONNECT_TIMEOUT_MS: "1000",
        MEDIA_TOTAL_TIMEOUT_MS: "1500",
        MEDIA_RETRY_BASE_MS: "100",
        MEDIA_RETRY_POLL_MS: "50",
        MEDIA_GC_GRACE_MS: String(GRACE_MS),
      },
    });
    brokerId = uniqueName("broker");
    expect((await partner.put(`/partner/v1/brokers/${brokerId}`, sample.broker())).status).toBe(201);
  });

  afterAll(async () => {
    await media?.stop();
    await api?.stop();
    images?.stop();
    await stored?.cleanup();
  });

  const GRACE_MS = 10 * 60_000;
  /** A sweep as if every file stored so far were older than the grace period. */
  const afterGrace = () => new Date(Date.now() + GRACE_MS + 60_000);

  type Photo = {
    url: string;
    sortKey: number;
    state: string;
    failureReason: string | null;
    warning: string | null;
    width: number | null;
    height: number | null;
    variants: Variant[];
  };
  type Variant = { width: number; height: number; format: string; url: string };

  const photosOf = (...paths: string[]) =>
    paths.map((p, i) => ({ url: p.startsWith("http") ? p : images.url(p), sortKey: i + 1 }));

  async function putListing(photos: { url: string; sortKey: number }[], externalId = uniqueName("listing")) {
    const res = await partner.put(`/partner/v1/listings/${externalId}`, sample.listing(brokerId, { photos }));
    expect([200, 201]).toContain(res.status);
    return { externalId, serviceListingId: res.body.serviceListingId as number };
  }

  async function readPhotos(externalId: string): Promise<Photo[]> {
    const res = await partner.get(`/partner/v1/listings/${externalId}`);
    expect(res.status).toBe(200);
    return res.body.listing.photos;
  }

  /** Waits until no photo of the listing is pending any more. */
  const settled = (externalId: string, timeoutMs = 30_000) =>
    until(
      `photos of ${externalId} to settle`,
      async () => {
        const photos = await readPhotos(externalId);
        return photos.every((p) => p.state !== "pending") ? photos : null;
      },
      timeoutMs,
    );

  const byUrl = (photos: Photo[], url: string) => photos.find((p) => p.url === url)!;
  const nameOf = (variantUrl: string) => variantUrl.slice(`${TEST_PUBLIC_BASE_URL}/media/`.length);
  const fetchMedia = (name: string, init?: RequestInit) => fetch(`${api.marketplaceUrl}/media/${name}`, init);

  describe(`listing photos (${kind} storage)`, () => {
    test("become ready with WebP and JPEG variants at 1600, 800 and 400 px, stored once and served by the API as immutable", async () => {
      const { externalId } = await putListing(photosOf("/photo.jpg?t=ready"));
      const [photo] = await settled(externalId);
      expect(photo).toMatchObject({ state: "ready", failureReason: null, warning: null, width: 2000, height: 1500 });
      expect(photo!.variants.map((v) => [v.width, v.height, v.format])).toEqual([
        [1600, 1200, "webp"],
        [1600, 1200, "jpeg"],
        [800, 600, "webp"],
        [800, 600, "jpeg"],
        [400, 300, "webp"],
        [400, 300, "jpeg"],
      ]);
      for (const v of photo!.variants) {
        expect(v.url).toMatch(new RegExp(`^${TEST_PUBLIC_BASE_URL}/media/[0-9a-f]{64}\\.(webp|jpg)$`));
        const res = await fetchMedia(nameOf(v.url));
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toBe(v.format === "webp" ? "image/webp" : "image/jpeg");
        expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
        const bytes = Buffer.from(await res.arrayBuffer());
        expect(new Bun.CryptoHasher("sha256").update(bytes).digest("hex")).toBe(nameOf(v.url).slice(0, 64));
        const meta = await sharp(bytes).metadata();
        expect([meta.format, meta.width, meta.height, meta.space] as unknown[]).toEqual([
          v.format,
          v.width,
          v.height,
          "srgb",
        ]);
        expect(meta.exif).toBeUndefined();
      }
      expect(images.hits("/photo.jpg?t=ready")).toBe(1);
      const name = nameOf(photo!.variants[0]!.url);
      const again = await fetchMedia(name, { headers: { "if-none-match": `"${name.slice(0, 64)}"` } });
      expect(again.status).toBe(304);
    });

    test("a photo narrower than recommended is processed without upscaling and carries a warning", async () => {
      const { externalId } = await putListing(photosOf("/small.png?t=warn"));
      const [photo] = await settled(externalId);
      expect(photo).toMatchObject({
        state: "ready",
        width: 800,
        height: 600,
        warning: "image is 800 px wide; at least 1200 px is recommended",
      });
      expect(photo!.variants.map((v) => [v.width, v.format])).toEqual([
        [800, "webp"],
        [800, "jpeg"],
        [400, "webp"],
        [400, "jpeg"],
      ]);
    });

    test("an EXIF-rotated photo is turned upright and its orientation tag dropped", async () => {
      const { externalId } = await putListing(photosOf("/rotated.jpg?t=exif"));
      const [photo] = await settled(externalId);
      expect(photo).toMatchObject({ state: "ready", width: 1200, height: 1600 });
      expect(photo!.variants.map((v) => [v.width, v.height])).toEqual([
        [800, 1067],
        [800, 1067],
        [400, 533],
        [400, 533],
      ]);
      const meta = await sharp(
        Buffer.from(await (await fetchMedia(nameOf(photo!.variants[1]!.url))).arrayBuffer()),
      ).metadata();
      expect([meta.width, meta.height, meta.orientation]).toEqual([800, 1067, undefined]);
    });

    independent(
      "broken, hostile and oversized images fail once with an actionable reason, and the listing's good photos still become ready",
      async () => {
        const cases: [string, string][] = [
          ["http://no-such-host.invalid/x.jpg", "host not found"],
          ["/missing.jpg?t=bad", "HTTP 404 from image host"],
          ["/gone.jpg?t=bad", "HTTP 410 from image host"],
          ["/text.jpg?t=bad", "not an image"],
          ["/huge.jpg?t=bad", "image too large"],
          ["/endless.jpg?t=bad", "image too large"],
          ["/bomb.png?t=bad", "image dimensions too large"],
          ["http://10.0.0.1/x.jpg", "address not allowed"],
          ["http://169.254.169.254/latest/meta-data/", "address not allowed"],
          [`http://localhost:${images.port}/photo.jpg?t=bad`, "address not allowed"],
          ["/to-private.jpg?t=bad", "address not allowed"],
          ["/to-ftp.jpg?t=bad", "unsupported URL scheme"],
          ["/redirect/4/photo-2.jpg?t=bad", "too many redirects"],
        ];
        const good = ["/photo-2.jpg?t=bad", "/redirect/3/photo-3.jpg"];
        const { externalId } = await putListing(photosOf(...cases.map(([p]) => p), ...good));
        const photos = await settled(externalId);
        for (const [path, reason] of cases) {
          const url = path.startsWith("http") ? path : images.url(path);
          expect({
            url,
            state: byUrl(photos, url).state,
            reason: byUrl(photos, url).failureReason,
            variants: byUrl(photos, url).variants,
          }).toEqual({ url, state: "failed", reason, variants: [] });
        }
        for (const path of good) expect(byUrl(photos, images.url(path)).state).toBe("ready");
        // Permanent failures are not retried.
        for (const path of [
          "/missing.jpg?t=bad",
          "/text.jpg?t=bad",
          "/huge.jpg?t=bad",
          "/bomb.png?t=bad",
          "/to-private.jpg?t=bad",
        ])
          expect(images.hits(path)).toBe(1);
        expect(images.hits(`/photo.jpg?t=bad`)).toBe(0); // localhost was refused before connecting
      },
    );

    independent(
      "transient failures are retried with backoff up to the bound; a host that never answers times out without stalling other listings",
      async () => {
        const slow = await putListing(photosOf("/slow.jpg?t=retry", "/always-503.jpg?t=retry", "/flaky/a.jpg"));
        const other = await putListing(photosOf("/photo-3.jpg?t=retry"));
        const [otherPhoto] = await settled(other.externalId, 10_000);
        expect(otherPhoto!.state).toBe("ready");
        expect(byUrl(await readPhotos(slow.externalId), images.url("/slow.jpg?t=retry")).state).toBe("pending");

        const photos = await settled(slow.externalId, 40_000);
        expect(byUrl(photos, images.url("/slow.jpg?t=retry"))).toMatchObject({
          state: "failed",
          failureReason: "timed out",
        });
        expect(byUrl(photos, images.url("/always-503.jpg?t=retry"))).toMatchObject({
          state: "failed",
          failureReason: "HTTP 503 from image host",
        });
        expect(byUrl(photos, images.url("/flaky/a.jpg"))).toMatchObject({ state: "ready", width: 1800, height: 1200 });
        expect(images.hits("/slow.jpg?t=retry")).toBe(4);
        expect(images.hits("/always-503.jpg?t=retry")).toBe(4);
        expect(images.hits("/flaky/a.jpg")).toBe(3);
      },
      60_000,
    );
  });

  describe(`idempotency (${kind} storage)`, () => {
    test("re-sending the same URL downloads nothing again and keeps its variants", async () => {
      const url = images.url("/photo-2.jpg?t=resend");
      const { externalId } = await putListing([{ url, sortKey: 1 }]);
      const [first] = await settled(externalId);
      expect(first!.state).toBe("ready");
      await putListing(
        [{ url, sortKey: 7 }, ...photosOf("/small.png?t=resend").map((p) => ({ ...p, sortKey: 2 }))],
        externalId,
      );
      const photos = await settled(externalId);
      expect(photos.map((p) => [p.url, p.sortKey, p.state])).toEqual([
        [images.url("/small.png?t=resend"), 2, "ready"],
        [url, 7, "ready"],
      ]);
      expect(byUrl(photos, url).variants).toEqual(first!.variants);
      expect(images.hits("/photo-2.jpg?t=resend")).toBe(1);
    });

    async function latestEvent(serviceListingId: number) {
      const [row] =
        await api.sql`SELECT payload FROM outbox WHERE topic = ${Topics.listingEvents.name} AND message_key = ${String(serviceListingId)} ORDER BY id DESC LIMIT 1`;
      return row!.payload;
    }

    async function redeliver(envelope: unknown, key: string) {
      const producer = api.kafka.producer();
      await producer.connect();
      const before = media.service.stats().eventsHandled;
      await producer.send({ topic: Topics.listingEvents.name, messages: [{ key, value: JSON.stringify(envelope) }] });
      await producer.disconnect();
      await until("the redelivered event to be handled", () => media.service.stats().eventsHandled > before);
    }

    test("a redelivered event changes nothing: no second download, the same variants", async () => {
      const { externalId, serviceListingId } = await putListing(photosOf("/photo-3.jpg?t=redeliver"));
      const before = await settled(externalId);
      await until(
        "the event to be published",
        async () =>
          (await api.sql`SELECT 1 FROM outbox WHERE message_key = ${String(serviceListingId)} AND published_at IS NULL`)
            .length === 0,
      );
      await redeliver(await latestEvent(serviceListingId), String(serviceListingId));
      expect(await readPhotos(externalId)).toEqual(before);
      expect(images.hits("/photo-3.jpg?t=redeliver")).toBe(1);
    });

    independent("a stale event does not resurrect removed photos", async () => {
      const { externalId, serviceListingId } = await putListing(
        photosOf("/photo.jpg?t=stale-a", "/small.png?t=stale-b"),
      );
      await settled(externalId);
      const v1 = await latestEvent(serviceListingId);
      await putListing(photosOf("/photo-2.jpg?t=stale-c"), externalId);
      const after = await settled(externalId);
      expect(after.map((p) => p.url)).toEqual([images.url("/photo-2.jpg?t=stale-c")]);
      const staleBefore = media.service.stats().staleEvents;
      await redeliver(v1, String(serviceListingId));
      expect(media.service.stats().staleEvents).toBe(staleBefore + 1);
      expect(await readPhotos(externalId)).toEqual(after);
      expect(images.hits("/photo.jpg?t=stale-a") + images.hits("/small.png?t=stale-b")).toBe(2);
    });

    independent("a result for a photo removed while it was downloading writes nothing", async () => {
      const key = uniqueName("hold");
      const { externalId } = await putListing(photosOf(`/hold/${key}`));
      await until("the download to start", () => images.hits(`/hold/${key}`) === 1);
      const discardedBefore = media.service.stats().discarded;
      await putListing(photosOf("/photo-3.jpg?t=late"), externalId);
      images.release(key);
      await until("the late result to be discarded", () => media.service.stats().discarded === discardedBefore + 1);
      const photos = await settled(externalId);
      expect(photos.map((p) => [p.url, p.state])).toEqual([[images.url("/photo-3.jpg?t=late"), "ready"]]);
    });
  });

  describe(`broker avatars (${kind} storage)`, () => {
    async function putBroker(avatarUrl: string, externalId = uniqueName("broker")) {
      const res = await partner.put(`/partner/v1/brokers/${externalId}`, sample.broker({ avatarUrl }));
      expect([200, 201]).toContain(res.status);
      return externalId;
    }
    const avatarSettled = (externalId: string) =>
      until(`avatar of ${externalId}`, async () => {
        const { body } = await partner.get(`/partner/v1/brokers/${externalId}`);
        return body.broker.avatar.state === "pending" ? null : body.broker.avatar;
      });

    test("are cropped to 400 and 96 px squares in WebP and JPEG", async () => {
      const id = await putBroker(images.url("/avatar.jpg?t=crop"));
      const avatar = await avatarSettled(id);
      expect(avatar).toMatchObject({ state: "ready", width: 1000, height: 800, warning: null, failureReason: null });
      expect(avatar.variants.map((v: Variant) => [v.width, v.height, v.format])).toEqual([
        [400, 400, "webp"],
        [400, 400, "jpeg"],
        [96, 96, "webp"],
        [96, 96, "jpeg"],
      ]);
      for (const v of avatar.variants as Variant[]) {
        const meta = await sharp(Buffer.from(await (await fetchMedia(nameOf(v.url))).arrayBuffer())).metadata();
        expect([meta.format, meta.width, meta.height] as unknown[]).toEqual([v.format, v.width, v.height]);
      }
    });

    test("a small avatar is not upscaled and carries a warning", async () => {
      const avatar = await avatarSettled(await putBroker(images.url("/avatar-tiny.jpg?t=tiny")));
      expect(avatar).toMatchObject({
        state: "ready",
        width: 100,
        height: 100,
        warning: "image is 100x100 px; at least 400x400 px is recommended",
      });
      expect(avatar.variants.map((v: Variant) => [v.width, v.height])).toEqual([
        [96, 96],
        [96, 96],
      ]);
    });

    independent("a failed avatar says why", async () => {
      expect(await avatarSettled(await putBroker(images.url("/text.jpg?t=avatar")))).toMatchObject({
        state: "failed",
        failureReason: "not an image",
        variants: [],
      });
    });

    independent("a result for an avatar URL replaced while it was downloading does not touch the new one", async () => {
      const key = uniqueName("hold");
      const id = await putBroker(images.url(`/hold/${key}`));
      await until("the download to start", () => images.hits(`/hold/${key}`) === 1);
      await putBroker(images.url("/missing.jpg?t=replaced"), id);
      images.release(key);
      const avatar = await avatarSettled(id);
      expect(avatar).toMatchObject({
        url: images.url("/missing.jpg?t=replaced"),
        state: "failed",
        failureReason: "HTTP 404 from image host",
        variants: [],
      });
    });
  });

  describe(`stored files (${kind} storage)`, () => {
    /** Another test run may hold the collector's lock for a moment. */
    const sweep = (now?: Date) =>
      until("a garbage collection sweep", async () => {
        const result = await media.service.gc.sweep(now);
        return result.skipped ? null : result;
      });

    test("GET /media answers 404 in the error shape for unknown names and refuses path traversal", async () => {
      for (const path of [
        `/media/${"0".repeat(64)}.webp`,
        "/media/..%2F..%2Fpackage.json",
        "/media/%2e%2e%2fpackage.json",
        "/media/package.json",
        "/media/..%2f.data%2fmedia-test",
      ]) {
        const res = await fetch(`${api.baseUrl}${path}`);
        expect({ path, status: res.status, body: await res.json() }).toEqual({
          path,
          status: 404,
          body: { status: "error", error: "Not found" },
        });
      }
    });

    test("replaced photos leave the read-back, and their files are collected once no record references them", async () => {
      const only = await putListing(photosOf("/gc-only.jpg", "/gc-shared.jpg"));
      const keeper = await putListing(photosOf("/gc-shared.jpg?other-url"));
      const before = await settled(only.externalId);
      const [kept] = await settled(keeper.externalId);
      const onlyNames = byUrl(before, images.url("/gc-only.jpg")).variants.map((v) => nameOf(v.url));
      const sharedNames = byUrl(before, images.url("/gc-shared.jpg")).variants.map((v) => nameOf(v.url));
      // Identical images are stored once.
      expect(kept!.variants.map((v) => nameOf(v.url))).toEqual(sharedNames);

      await putListing(photosOf("/small.png?t=gc"), only.externalId);
      const after = await settled(only.externalId);
      expect(after.map((p) => p.url)).toEqual([images.url("/small.png?t=gc")]);

      // Within the grace period nothing is deleted, referenced or not.
      await sweep();
      for (const name of [...onlyNames, ...sharedNames]) expect((await fetchMedia(name)).status).toBe(200);

      const result = await sweep(afterGrace());
      expect(result.deleted).toBeGreaterThanOrEqual(onlyNames.length);
      for (const name of onlyNames) expect((await fetchMedia(name)).status).toBe(404);
      for (const name of sharedNames) expect((await fetchMedia(name)).status).toBe(200);
      expect(await stored.storage.exists(onlyNames[0]!)).toBe(false);
    });

    test("an unreferenced file survives the grace period, then goes", async () => {
      const bytes = crypto.getRandomValues(new Uint8Array(64));
      const name = `${new Bun.CryptoHasher("sha256").update(bytes).digest("hex")}.webp`;
      await stored.storage.put(name, bytes, "image/webp");
      await sweep();
      expect(await stored.storage.exists(name)).toBe(true);
      await sweep(afterGrace());
      expect(await stored.storage.exists(name)).toBe(false);
    });

    test("storing a name that already exists refreshes it, so the collector waits a whole grace period again", async () => {
      const bytes = crypto.getRandomValues(new Uint8Array(64));
      const name = `${new Bun.CryptoHasher("sha256").update(bytes).digest("hex")}.jpg`;
      await stored.storage.put(name, bytes, "image/jpeg");
      const first = (await stored.storage.stat(name))!.modifiedAt;
      // Object stores keep whole seconds: store again until the time has visibly moved on.
      const refreshed = await until(
        "a later modification time",
        async () => {
          await stored.storage.put(name, bytes, "image/jpeg");
          const now = (await stored.storage.stat(name))!.modifiedAt;
          return now > first ? now : (await Bun.sleep(200), null);
        },
        10_000,
      );
      // A sweep for which the first write is past its grace period, the second not.
      const result = await sweep(new Date(first.getTime() + GRACE_MS + (refreshed.getTime() - first.getTime()) / 2));
      expect(result.skipped).toBe(false);
      expect(await stored.storage.exists(name)).toBe(true);
      await sweep(new Date(refreshed.getTime() + GRACE_MS + 1000));
      expect(await stored.storage.exists(name)).toBe(false);
    });
  });

  describe(`the consumer (${kind} storage)`, () => {
    independent("sends an event it can never process to the dead-letter topic and keeps going", async () => {
      const eventId = crypto.randomUUID();
      const producer = api.kafka.producer();
      await producer.connect();
      const envelope = {
        eventId,
        type: "listing.upserted",
        aggregateType: "listing",
        aggregateId: "12345",
        version: 1,
        partnerId: partner.partnerId,
        occurredAt: new Date().toISOString(),
        payload: { photos: [] },
      };
      await producer.send({
        topic: Topics.listingEvents.name,
        messages: [{ key: "12345", value: JSON.stringify(envelope) }],
      });
      await producer.disconnect();

      const reader = api.kafka.consumer({ groupId: uniqueName("media-dlq-reader") });
      const found = Promise.withResolvers<Record<string, string>>();
      await reader.connect();
      await reader.subscribe({ topic: Topics.mediaDeadLetter.name, fromBeginning: true });
      await reader.run({
        eachMessage: async ({ message }) => {
          if (message.value && JSON.parse(message.value.toString()).eventId === eventId) {
            found.resolve(Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)])));
          }
        },
      });
      const headers = await Promise.race([found.promise, Bun.sleep(30_000).then(() => null)]);
      await reader.disconnect();
      expect(headers).toMatchObject({
        "x-dead-letter-reason": "listing event payload has no listingId matching aggregateId",
        "x-consumer-group": media.groupId,
      });

      // The partition moved on.
      const { externalId } = await putListing(photosOf("/photo-3.jpg?t=after-dlq"));
      expect((await settled(externalId))[0]!.state).toBe("ready");
      expect(media.service.isRunning()).toBe(true);
    });
  });
}
