// The S3-compatible server the runner (or compose / testcontainers) provides is a real one: it stores and lists
// objects, refuses unsigned and wrongly signed requests, and honours presigned URLs.
import { expect, test } from "bun:test";
import { testS3Env, uniqueName } from "../support/env.ts";

const s3 = testS3Env();
const client = new Bun.S3Client({
  endpoint: s3.S3_ENDPOINT,
  bucket: s3.S3_BUCKET,
  region: s3.S3_REGION,
  accessKeyId: s3.S3_ACCESS_KEY_ID,
  secretAccessKey: s3.S3_SECRET_ACCESS_KEY,
});

test("the S3 server stores, lists, serves through a presigned URL and deletes an object", async () => {
  const prefix = `${uniqueName("plumbing")}/`;
  await client.write(`${prefix}a.txt`, "hello", { type: "text/plain" });
  expect(await client.file(`${prefix}a.txt`).text()).toBe("hello");
  const listed = await client.list({ prefix });
  expect(listed.contents?.map((o) => [o.key, o.size])).toEqual([[`${prefix}a.txt`, 5]]);
  const presigned = await fetch(client.presign(`${prefix}a.txt`, { expiresIn: 60 }));
  expect([presigned.status, await presigned.text()]).toEqual([200, "hello"]);
  await client.delete(`${prefix}a.txt`);
  expect(await client.exists(`${prefix}a.txt`)).toBe(false);
});

test("the S3 server refuses unsigned and wrongly signed requests: the bucket is private", async () => {
  const key = `${uniqueName("private")}.txt`;
  await client.write(key, "not for everyone");
  try {
    for (const path of [`/${s3.S3_BUCKET}/`, `/${s3.S3_BUCKET}?list-type=2`, `/${s3.S3_BUCKET}/${key}`]) {
      const unsigned = await fetch(`${s3.S3_ENDPOINT}${path}`);
      expect([path, unsigned.status]).toEqual([path, 403]);
      await unsigned.body?.cancel();
    }
  } finally {
    await client.delete(key);
  }
  const wrong = new Bun.S3Client({
    endpoint: s3.S3_ENDPOINT,
    bucket: s3.S3_BUCKET,
    region: s3.S3_REGION,
    accessKeyId: s3.S3_ACCESS_KEY_ID,
    secretAccessKey: "not-the-secret",
  });
  let code: string | undefined;
  await wrong.write(`${uniqueName("refused")}.txt`, "x").catch((err) => (code = err.code));
  expect(code).toBe("SignatureDoesNotMatch");
});
