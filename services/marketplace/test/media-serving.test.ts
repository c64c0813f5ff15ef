// GET /media/<name> from object storage (the real S3-compatible server): streamed through the API with an ETag,
// or redirected to a presigned URL; 503 while storage is unreachable. And migration 0011: a record written
// with absolute variant URLs keeps working, its URLs now built from the configured public address.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createS3MediaStorage, contentName } from "@pss/service-kit";
import { MIGRATIONS_DIR } from "@pss/database";
import { testS3Env, uniqueName } from "../../../test/support/env.ts";
import { createTestStorage, type TestStorage } from "../../media/test/support/media-harness.ts";
import { sample, startApi, type ApiHarness } from "../../api/test/support/harness.ts";

let stored: TestStorage;
let api: ApiHarness;
let redirecting: ApiHarness;
let unreachable: ApiHarness;
const bytes = crypto.getRandomValues(new Uint8Array(2048));
const name = contentName(bytes, "webp");

beforeAll(async () => {
  stored = await createTestStorage("s3");
  await stored.storage.put(name, bytes, "image/webp");
  api = await startApi({ mediaStorage: stored.storage });
  redirecting = await startApi({ mediaStorage: stored.storage, mediaDelivery: "redirect", relay: false });
  // Nothing listens on port 9 (discard) on loopback: every request to this storage is refused.
  const s3 = testS3Env();
  const down = createS3MediaStorage({
    kind: "s3",
    endpoint: "http://127.0.0.1:9",
    bucket: s3.S3_BUCKET!,
    region: "us-east-1",
    accessKeyId: s3.S3_ACCESS_KEY_ID!,
    secretAccessKey: s3.S3_SECRET_ACCESS_KEY!,
    forcePathStyle: true,
    prefix: "",
    requestTimeoutMs: 2000,
  });
  unreachable = await startApi({ mediaStorage: down, relay: false });
});

afterAll(async () => {
  await unreachable?.stop();
  await redirecting?.stop();
  await api?.stop();
  await stored?.cleanup();
});

describe("variants served from object storage", () => {
  test("through the API: the stored bytes, immutable caching, and 304 for the entity tag without a storage round trip", async () => {
    const res = await fetch(`${api.marketplaceUrl}/media/${name}`);
    expect(res.status).toBe(200);
    expect(
      Object.fromEntries(
        ["content-type", "cache-control", "etag", "x-content-type-options"].map((h) => [h, res.headers.get(h)]),
      ),
    ).toEqual({
      "content-type": "image/webp",
      "cache-control": "public, max-age=31536000, immutable",
      etag: `"${name.slice(0, 64)}"`,
      "x-content-type-options": "nosniff",
    });
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes);
    for (const tag of [`"${name.slice(0, 64)}"`, `W/"${name.slice(0, 64)}"`, `"other", "${name.slice(0, 64)}"`]) {
      expect((await fetch(`${api.marketplaceUrl}/media/${name}`, { headers: { "if-none-match": tag } })).status).toBe(
        304,
      );
    }
    // Even storage being down does not matter to a client that already holds the bytes.
    expect(
      (
        await fetch(`${unreachable.marketplaceUrl}/media/${name}`, {
          headers: { "if-none-match": `"${name.slice(0, 64)}"` },
        })
      ).status,
    ).toBe(304);
  });

  test("by redirect: 302 to a presigned URL that serves the same bytes", async () => {
    const res = await fetch(`${redirecting.marketplaceUrl}/media/${name}`, { redirect: "manual" });
    expect(res.status).toBe(302);
    const location = res.headers.get("location")!;
    expect(location).toStartWith(`${testS3Env().S3_ENDPOINT}/`);
    expect(location).toContain("X-Amz-Signature=");
    expect(res.headers.get("cache-control")).toBe("public, max-age=1800");
    const followed = await fetch(`${redirecting.marketplaceUrl}/media/${name}`);
    expect(followed.status).toBe(200);
    expect(new Uint8Array(await followed.arrayBuffer())).toEqual(bytes);
  });

  test("an unknown name is 404 in the error shape; unreachable storage is 503 with Retry-After, fast", async () => {
    const missing = await fetch(`${api.marketplaceUrl}/media/${"1".repeat(64)}.jpg`);
    expect([missing.status, await missing.json()]).toEqual([404, { status: "error", error: "Not found" }]);
    const began = performance.now();
    const res = await fetch(`${unreachable.marketplaceUrl}/media/${name}`);
    expect([res.status, res.headers.get("retry-after"), await res.json()]).toEqual([
      503,
      "2",
      { status: "error", error: "Image storage is temporarily unavailable; please retry shortly" },
    ]);
    expect(performance.now() - began).toBeLessThan(5000);
  });
});

describe("migration 0011", () => {
  test("variants stored as absolute URLs become media keys, and the read-back builds their URLs from PUBLIC_BASE_URL", async () => {
    const partner = await api.createPartner();
    const brokerId = uniqueName("broker");
    await partner.put(
      `/partner/v1/brokers/${brokerId}`,
      sample.broker({ avatarUrl: "https://images.example.com/face.jpg" }),
    );
    const externalId = uniqueName("listing");
    const { body } = await partner.put(
      `/partner/v1/listings/${externalId}`,
      sample.listing(brokerId, { photos: [{ url: "https://images.example.com/front.jpg", sortKey: 1 }] }),
    );
    // As written before keys: absolute URLs under the public address of that time.
    const legacy = [
      { width: 400, height: 300, format: "webp", url: `http://127.0.0.1:8080/media/${name}` },
      { width: 400, height: 300, format: "jpeg", url: "https://cdn.example.com/not-ours.jpg" },
    ];
    await api.sql`UPDATE listing_photos SET state = 'ready', width = 400, height = 300, variants = ${api.sql.json(legacy)} WHERE listing_id = ${body.serviceListingId}`;
    await api.sql`UPDATE brokers SET avatar_state = 'ready', avatar_width = 400, avatar_height = 300, avatar_variants = ${api.sql.json(legacy)}
                  WHERE id = (SELECT broker_id FROM listings WHERE id = ${body.serviceListingId})`;

    const migration = readFileSync(join(MIGRATIONS_DIR, "0011_media_keys.sql"), "utf8");
    await api.sql.begin((tx) => tx.unsafe(migration));

    const [photo] = await api.sql`SELECT variants FROM listing_photos WHERE listing_id = ${body.serviceListingId}`;
    expect(photo!.variants).toEqual([{ width: 400, height: 300, format: "webp", key: name }, legacy[1]]);
    const listing = (await partner.get(`/partner/v1/listings/${externalId}`)).body.listing;
    const expected = [
      { width: 400, height: 300, format: "webp", url: `https://market.example.test/media/${name}` },
      legacy[1],
    ];
    expect(listing.photos[0].variants).toEqual(expected);
    expect((await partner.get(`/partner/v1/brokers/${brokerId}`)).body.broker.avatar.variants).toEqual(expected);
    // The URL works: the API serves the stored file under the new address's path.
    const served = await fetch(`${api.marketplaceUrl}${new URL(expected[0]!.url).pathname}`);
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(bytes);
  });
});
