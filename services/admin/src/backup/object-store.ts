// Backups in an object store: `admin backup --to s3://<bucket>/<prefix>` writes the backup into a scratch
// directory (TMPDIR) as usual, then uploads every file under <prefix>/, manifest.json last (so an interrupted upload
// is, as an interrupted backup, a location without a manifest); `admin restore --from s3://…` downloads a complete
// one (it has a manifest) into a scratch directory and restores from there, where every file is checked against
// the manifest. The object store is the services' own (S3_ENDPOINT and its credentials), the bucket the URL's:
// the media garbage collector only ever touches `<S3_PREFIX><ab>/<variant>` keys, so a `backups/` prefix in the
// media bucket is safe. Kubernetes runs this from the chart's backup CronJob and restore Job.
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { BackupError } from "@pss/database/backup";
import type { MediaStorageConfig } from "@pss/service-kit";
import { MANIFEST_FILE } from "./manifest.ts";

export interface ObjectStoreLocation {
  bucket: string;
  /** Key prefix of the backup's files, ending in "/". */
  prefix: string;
  /** As given, for messages and output. */
  url: string;
}

/** s3://<bucket>/<path>: null when `value` is no s3:// URL (a directory); throws on a malformed one. */
export function parseObjectStoreLocation(value: string): ObjectStoreLocation | null {
  if (!value.startsWith("s3://")) return null;
  const m =
    /^s3:\/\/(?<bucket>[a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\/(?<path>(?:[A-Za-z0-9._-]+\/)*[A-Za-z0-9._-]+)\/?$/.exec(
      value,
    )?.groups;
  if (!m?.bucket || !m.path || m.path.split("/").some((part) => /^\.+$/.test(part)))
    throw new BackupError(
      `'${value}' is not a backup location in an object store: s3://<bucket>/<path>, e.g. s3://pss-media/backups/20261128T010000Z`,
    );
  return { bucket: m.bucket, prefix: `${m.path}/`, url: `s3://${m.bucket}/${m.path}` };
}

/** A client for the location's bucket with the services' object store settings (S3_ENDPOINT, credentials). */
export function objectStoreClient(store: MediaStorageConfig, location: ObjectStoreLocation): Bun.S3Client {
  if (store.kind !== "s3")
    throw new BackupError(
      `${location.url}: backups in an object store use the services' object store settings (MEDIA_STORAGE=s3 and S3_*); with MEDIA_STORAGE=local give a directory`,
    );
  return new Bun.S3Client({
    endpoint: store.endpoint,
    bucket: location.bucket,
    region: store.region,
    accessKeyId: store.accessKeyId,
    secretAccessKey: store.secretAccessKey,
    sessionToken: store.sessionToken,
    virtualHostedStyle: !store.forcePathStyle,
  });
}

async function* keysUnder(client: Bun.S3Client, prefix: string): AsyncIterable<string> {
  let continuationToken: string | undefined;
  do {
    const page = await client.list({ prefix, maxKeys: 1000, continuationToken });
    for (const object of page.contents ?? []) yield object.key;
    continuationToken = page.isTruncated ? page.nextContinuationToken : undefined;
  } while (continuationToken);
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

/** A scratch directory for `work`, removed afterwards whatever happens (a backup holds the data: never left). */
export async function withScratch<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const scratch = mkdtempSync(join(tmpdir(), "pss-backup-"));
  try {
    return await work(join(scratch, "backup"));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Refuses a location that holds anything (as a directory that is not empty): one backup per name. */
export async function assertFreeLocation(client: Bun.S3Client, location: ObjectStoreLocation): Promise<void> {
  if ((await client.list({ prefix: location.prefix, maxKeys: 1 })).contents?.length)
    throw new BackupError(`${location.url} already holds files: give a new name for each backup`);
}

/** Uploads the backup directory `dir` to the location, manifest.json last; refuses a location that holds anything. */
export async function uploadBackup(
  client: Bun.S3Client,
  location: ObjectStoreLocation,
  dir: string,
  progress: (line: string) => void,
): Promise<{ files: number }> {
  await assertFreeLocation(client, location);
  const files = filesUnder(dir);
  const ordered = [...files.filter((f) => f !== MANIFEST_FILE), MANIFEST_FILE];
  let done = 0;
  for (const file of ordered) {
    await client.write(`${location.prefix}${file}`, Bun.file(join(dir, file)));
    done++;
    if (done % 500 === 0 || done === ordered.length) progress(`uploaded ${done} of ${ordered.length} files`);
  }
  return { files: ordered.length };
}

/** Downloads a complete backup (one with a manifest) from the location into `dir`. */
export async function downloadBackup(
  client: Bun.S3Client,
  location: ObjectStoreLocation,
  dir: string,
  progress: (line: string) => void,
): Promise<{ files: number }> {
  if (!(await client.exists(`${location.prefix}${MANIFEST_FILE}`)))
    throw new BackupError(
      `${location.url} has no ${MANIFEST_FILE}: not a backup, or an interrupted one (a backup uploads its manifest last)`,
    );
  let files = 0;
  for await (const key of keysUnder(client, location.prefix)) {
    const file = key.slice(location.prefix.length);
    if (!file || file.split("/").some((part) => part === ".." || part === "")) continue;
    const target = join(dir, file);
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    await Bun.write(target, client.file(key));
    files++;
    if (files % 500 === 0) progress(`downloaded ${files} files`);
  }
  progress(`downloaded ${files} files from ${location.url}`);
  return { files };
}
