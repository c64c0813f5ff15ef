// `admin backup --to <dir>`: the database (one snapshot, the recovery point), then the media store's variants,
// then (only when asked) the webhook secret key sealed with a passphrase, then manifest.sig and manifest.json.
// Variants are copied after the snapshot, so every variant a backed-up record names is there (the media garbage
// collector's grace period outlasts a backup); extra ones written meanwhile are harmless. Search and Kafka are not
// backed up: the index is rebuilt from PostgreSQL (`admin reindex`) and unsent events wait in the outbox table,
// which is in the backup. The directory is the operator's alone (0700, files 0600), whatever it was before.
import { createHash } from "node:crypto";
import { chmodSync, createWriteStream, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { once } from "node:events";
import { BackupError, dumpDatabase } from "@pss/database/backup";
import {
  createLocalMediaStorage,
  createMediaStorage,
  createSecretBox,
  describeMediaStorage,
  type MediaStorageConfig,
} from "@pss/service-kit";
import { copyVariants } from "@pss/media/copy-variants";
import type postgres from "postgres";
import {
  FORMAT,
  FORMAT_VERSION,
  MANIFEST_FILE,
  OBJECTS_DIR,
  OBJECTS_INDEX,
  WEBHOOK_KEY_FILE,
  type Manifest,
} from "./manifest.ts";
import { sealKey } from "./key-file.ts";
import { SIGNATURE_FILE, signManifest } from "./signature.ts";

export interface BackupDeps {
  sql: postgres.Sql;
  mediaStore: MediaStorageConfig;
  /** Seals manifest.json (BACKUP_SIGNING_KEY); never written into the backup. */
  signingKey: Buffer;
  /** Only with --with-webhook-key: the key, and the passphrase it is sealed with. */
  webhookKey: { key: Buffer; passphrase: string } | null;
  progress(message: string): void;
}

export const failuresText = (failures: { name: string; reason: string }[]) =>
  failures
    .slice(0, 3)
    .map((f) => `${f.name}: ${f.reason}`)
    .join("; ");

export async function createBackup(deps: BackupDeps, dir: string): Promise<Manifest> {
  if (existsSync(dir) && readdirSync(dir).length > 0)
    throw new BackupError(`${dir} is not empty: give a new directory for each backup`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // mkdir leaves an existing (empty) directory's mode as it was, and applies the umask to a new one.
  chmodSync(dir, 0o700);
  const started = performance.now();

  const database = await dumpDatabase(deps.sql, dir, {
    onTable: (t) => deps.progress(`${t.file}: ${t.rows} rows`),
  });
  const databaseDone = performance.now();

  const objectsDir = join(dir, OBJECTS_DIR);
  const target = createLocalMediaStorage({ dir: objectsDir });
  const copied = await copyVariants(createMediaStorage(deps.mediaStore), target, {
    onProgress: (r) => deps.progress(`objects: ${r.examined} examined, ${r.copied} copied`),
  });
  if (copied.failed > 0)
    throw new BackupError(
      `${copied.failed} variant(s) could not be copied from the media store (${failuresText(copied.failures)}); the backup in ${dir} is incomplete`,
    );
  rmSync(join(objectsDir, ".tmp"), { recursive: true, force: true });
  const index = await writeIndex(target.list(), join(dir, OBJECTS_INDEX));
  const objectsDone = performance.now();

  let webhookKey: Manifest["webhookKey"] = null;
  if (deps.webhookKey) {
    const text = sealKey(deps.webhookKey.key, deps.webhookKey.passphrase);
    writeFileSync(join(dir, WEBHOOK_KEY_FILE), text, { mode: 0o600 });
    webhookKey = {
      file: WEBHOOK_KEY_FILE,
      keyId: createSecretBox(deps.webhookKey.key).keyId,
      sha256: createHash("sha256").update(text).digest("hex"),
      sealed: "scrypt+aes-256-gcm",
    };
  }

  const manifest: Manifest = {
    format: FORMAT,
    formatVersion: FORMAT_VERSION,
    createdAt: new Date().toISOString(),
    recoveryPoint: { at: database.snapshotAt, snapshot: database.snapshot, serverVersion: database.serverVersion },
    database,
    objects: {
      store: describeMediaStorage(deps.mediaStore),
      count: index.count,
      bytes: copied.bytes,
      index: OBJECTS_INDEX,
      indexSha256: index.sha256,
    },
    webhookKey,
    durationsMs: {
      database: Math.round(databaseDone - started),
      objects: Math.round(objectsDone - databaseDone),
      total: Math.round(performance.now() - started),
    },
  };
  const bytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(join(dir, SIGNATURE_FILE), signManifest(bytes, deps.signingKey), { mode: 0o600 });
  // Last: its presence says the backup is complete.
  writeFileSync(join(dir, MANIFEST_FILE), bytes, { mode: 0o600 });
  return manifest;
}

/** Writes one name a line as they are listed (no list in memory); returns the count and the file's SHA-256. */
async function writeIndex(names: AsyncIterable<{ name: string }>, path: string) {
  const hash = createHash("sha256");
  const out = createWriteStream(path, { mode: 0o600 });
  let count = 0;
  for await (const { name } of names) {
    const line = Buffer.from(`${name}\n`);
    hash.update(line);
    if (!out.write(line)) await once(out, "drain");
    count++;
  }
  out.end();
  await once(out, "finish");
  return { count, sha256: hash.digest("hex") };
}
