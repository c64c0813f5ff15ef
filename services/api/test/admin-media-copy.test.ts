// `admin media copy-to-s3`, run as operators run it (a subprocess), from a local variant directory into the real
// S3-compatible server: every variant once, damaged files refused, and a second run copies nothing again.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { mediaRelativePath } from "@pss/contracts";
import { contentName, createLocalMediaStorage, createS3MediaStorage, type MediaStorage } from "@pss/service-kit";
import { testS3Env, uniqueName } from "../../../test/support/env.ts";

const ROOT = resolve(import.meta.dir, "../../..");
const s3 = { ...testS3Env(), S3_PREFIX: `${uniqueName("copy-test")}/` };
let dir: string;
let target: MediaStorage;
const files = Array.from({ length: 3 }, (_, i) => {
  const bytes = crypto.getRandomValues(new Uint8Array(1000 + i));
  return { name: contentName(bytes, i === 0 ? "jpeg" : "webp"), bytes };
});
const damaged = contentName(crypto.getRandomValues(new Uint8Array(10)), "webp");

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "pss-copy-test-"));
  const local = createLocalMediaStorage({ dir });
  for (const f of files) await local.put(f.name, f.bytes, "image/webp");
  // A file whose bytes are not what its name says (a disk error, a hand edit).
  await local.put(damaged, new Uint8Array(10), "image/webp");
  await writeFile(join(dir, mediaRelativePath(damaged)), "not the original bytes");
  target = createS3MediaStorage({
    kind: "s3",
    endpoint: s3.S3_ENDPOINT,
    bucket: s3.S3_BUCKET!,
    region: s3.S3_REGION!,
    accessKeyId: s3.S3_ACCESS_KEY_ID!,
    secretAccessKey: s3.S3_SECRET_ACCESS_KEY!,
    forcePathStyle: true,
    prefix: s3.S3_PREFIX,
    requestTimeoutMs: 5000,
  });
});

afterAll(async () => {
  for await (const f of target.list()) await target.delete(f.name);
  await rm(dir, { recursive: true, force: true });
});

async function copy(...flags: string[]) {
  const proc = Bun.spawn(
    [process.execPath, "services/admin/src/cli.ts", "media", "copy-to-s3", "--from-dir", dir, ...flags, "--json"],
    {
      cwd: ROOT,
      env: { ...process.env, ...s3 },
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  expect({ code, stderr: code === 0 ? "" : stderr }).toEqual({ code: 0, stderr: "" });
  return { ...JSON.parse(stdout), stderr };
}

test("copies every local variant into the bucket once, refuses a damaged one, and a second run finds them all there", async () => {
  const dry = await copy("--dry-run");
  expect(dry).toMatchObject({ dryRun: true, examined: 4, copied: 3, alreadyThere: 0, failed: 1 });
  expect(await target.exists(files[0]!.name)).toBe(false);

  const first = await copy();
  expect(first).toMatchObject({
    dryRun: false,
    examined: 4,
    copied: 3,
    alreadyThere: 0,
    failed: 1,
    bytes: 3003,
    failures: [{ name: damaged, reason: "content does not match its name (damaged file)" }],
  });
  expect(first.stderr).toContain("1 variant(s) not copied");
  for (const f of files) {
    const stored = await target.read(f.name);
    expect(new Uint8Array(await new Response(stored!.body).arrayBuffer())).toEqual(f.bytes);
  }
  expect(await target.exists(damaged)).toBe(false);

  const again = await copy();
  expect(again).toMatchObject({ examined: 4, copied: 0, alreadyThere: 3, failed: 1 });
});

test("a missing source directory is an error naming it", async () => {
  const proc = Bun.spawn(
    [process.execPath, "services/admin/src/cli.ts", "media", "copy-to-s3", "--from-dir", join(dir, "nope")],
    { cwd: ROOT, env: { ...process.env, ...s3 }, stdout: "pipe", stderr: "pipe" },
  );
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  expect([code, stdout]).toEqual([1, ""]);
  expect(stderr).toContain(`media directory ${join(dir, "nope")} not found`);
});
