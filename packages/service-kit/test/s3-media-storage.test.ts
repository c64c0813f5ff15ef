// The object-storage implementation against the real S3-compatible server: listing across pages, only its own
// keys under its prefix, and "not stored" answered as such rather than as an error.
import { afterAll, expect, test } from "bun:test";
import { contentName, createS3MediaStorage, type S3StorageConfig } from "../src/index.ts";
import { testS3Env, uniqueName } from "../../../test/support/env.ts";

const s3 = testS3Env();
const config: S3StorageConfig = {
  kind: "s3",
  endpoint: s3.S3_ENDPOINT,
  bucket: s3.S3_BUCKET!,
  region: s3.S3_REGION!,
  accessKeyId: s3.S3_ACCESS_KEY_ID!,
  secretAccessKey: s3.S3_SECRET_ACCESS_KEY!,
  forcePathStyle: true,
  prefix: `${uniqueName("storage-test")}/`,
  requestTimeoutMs: 5000,
  listPageSize: 2,
};
const storage = createS3MediaStorage(config);
const raw = new Bun.S3Client({
  endpoint: config.endpoint,
  bucket: config.bucket,
  region: config.region,
  accessKeyId: config.accessKeyId,
  secretAccessKey: config.secretAccessKey,
});

afterAll(async () => {
  for (const o of (await raw.list({ prefix: config.prefix })).contents ?? []) await raw.delete(o.key);
});

test("list walks every page and yields only variants stored under its prefix", async () => {
  const names: string[] = [];
  for (let i = 0; i < 5; i++) {
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    const name = contentName(bytes, i % 2 ? "jpeg" : "webp");
    await storage.put(name, bytes, "image/webp");
    names.push(name);
  }
  // Not ours: a file of another kind under the prefix, and a variant-like key outside it.
  await raw.write(`${config.prefix}notes.txt`, "x");
  await raw.write(`${config.prefix}zz/${names[0]}`, "misplaced");
  const listed: string[] = [];
  for await (const f of storage.list()) {
    expect(f.modifiedAt.getTime()).toBeGreaterThan(Date.now() - 60_000);
    listed.push(f.name);
  }
  expect(listed.sort()).toEqual([...names].sort());
});

test("a name that is not stored: stat and read answer null, delete succeeds, exists is false", async () => {
  const name = contentName(crypto.getRandomValues(new Uint8Array(8)), "webp");
  expect(await storage.stat(name)).toBeNull();
  expect(await storage.read(name)).toBeNull();
  expect(await storage.exists(name)).toBe(false);
  await storage.delete(name);
  await storage.check();
});

test("an unreachable server is an error within the request time limit, never a hang", async () => {
  const down = createS3MediaStorage({ ...config, endpoint: "http://127.0.0.1:9", requestTimeoutMs: 1000 });
  const name = contentName(crypto.getRandomValues(new Uint8Array(8)), "webp");
  const began = performance.now();
  await expect(down.put(name, new Uint8Array(8), "image/webp")).rejects.toThrow();
  await expect(down.check()).rejects.toThrow();
  expect(performance.now() - began).toBeLessThan(5000);
});
