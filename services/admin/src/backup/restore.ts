// `admin restore --from <dir>`: checks everything it can before changing anything (the manifest, every file's
// SHA-256, an empty target database, a schema this release knows), puts the variants back (each checked against
// its name, the SHA-256 of its bytes), writes the webhook key where asked, then loads the database in one
// transaction (@pss/database/backup). Variants go back first because that is repeatable: content-addressed
// names make a second run skip what is there, while the database load happens once.
import { createReadStream, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { isMediaName, mediaRelativePath } from "@pss/contracts";
import { BackupError, fileSha256, restoreDatabase } from "@pss/database/backup";
import {
  createLocalMediaStorage,
  createMediaStorage,
  createSecretBox,
  describeMediaStorage,
  parseSecretKey,
  type MediaStorage,
  type MediaStorageConfig,
} from "@pss/service-kit";
import { copyVariants } from "@pss/media/copy-variants";
import type postgres from "postgres";
import { failuresText } from "./backup.ts";
import { OBJECTS_DIR, readManifest, type Manifest } from "./manifest.ts";

export interface RestoreDeps {
  sql: postgres.Sql;
  mediaStore: MediaStorageConfig;
  progress(message: string): void;
}

export interface RestoreResult {
  manifest: Manifest;
  tables: number;
  rows: number;
  objects: { restored: number; alreadyThere: number; bytes: number };
  upgradedWith: string[];
  webhookKeyWrittenTo: string | null;
  durationsMs: { objects: number; database: number; total: number };
}

async function verifyFile(dir: string, file: string, sha256: string) {
  const actual = await fileSha256(join(dir, file));
  if (actual === null) throw new BackupError(`backup file ${file} is missing`);
  if (actual !== sha256)
    throw new BackupError(`backup file ${file} is damaged: its SHA-256 is not the one in manifest.json`);
}

/** The backup's variants, listed from its index (so a file missing from objects/ is named, not silently skipped). */
function indexedObjects(dir: string, manifest: Manifest): MediaStorage {
  const local = createLocalMediaStorage({ dir: join(dir, OBJECTS_DIR) });
  return {
    ...local,
    async *list() {
      const lines = createInterface({
        input: createReadStream(join(dir, manifest.objects.index)),
        crlfDelay: Infinity,
      });
      for await (const name of lines) {
        if (name === "") continue;
        if (!isMediaName(name))
          throw new BackupError(`backup file ${manifest.objects.index} is damaged: '${name.slice(0, 80)}'`);
        yield { name, modifiedAt: new Date(0) };
      }
    },
  };
}

function writeWebhookKey(dir: string, manifest: Manifest, to: string) {
  if (!manifest.webhookKey)
    throw new BackupError("the backup holds no webhook secret key (it was made with --without-webhook-key)");
  const text = readFileSync(join(dir, manifest.webhookKey.file), "utf8");
  if (existsSync(to)) {
    const present = parseSecretKey(readFileSync(to, "utf8"));
    if (present && createSecretBox(present).keyId === manifest.webhookKey.keyId) return;
    throw new BackupError(`${to} exists and holds another key: move it away or choose another --webhook-key-to`);
  }
  writeFileSync(to, text, { mode: 0o600 });
}

export async function restoreBackup(
  deps: RestoreDeps,
  dir: string,
  opts: { webhookKeyTo?: string } = {},
): Promise<RestoreResult> {
  const started = performance.now();
  const manifest = readManifest(dir);
  await verifyFile(dir, manifest.objects.index, manifest.objects.indexSha256);
  if (manifest.webhookKey) await verifyFile(dir, manifest.webhookKey.file, manifest.webhookKey.sha256);
  if (opts.webhookKeyTo && !manifest.webhookKey)
    throw new BackupError("the backup holds no webhook secret key (it was made with --without-webhook-key)");

  let objects: RestoreResult["objects"] = { restored: 0, alreadyThere: 0, bytes: 0 };
  let objectsDone = started;
  const db = await restoreDatabase(deps.sql, dir, manifest.database, {
    onTable: (name, rows) => deps.progress(`${name}: ${rows} rows`),
    beforeLoad: async () => {
      const copied = await copyVariants(indexedObjects(dir, manifest), createMediaStorage(deps.mediaStore), {
        onProgress: (r) => deps.progress(`objects: ${r.examined} examined, ${r.copied} restored`),
      });
      if (copied.failed > 0) {
        const named = copied.failures.map((f) => ({
          name: `${OBJECTS_DIR}/${mediaRelativePath(f.name)}`,
          reason: f.reason.startsWith("disappeared") ? "missing from the backup" : f.reason,
        }));
        throw new BackupError(
          `${copied.failed} variant(s) could not be restored to ${describeMediaStorage(deps.mediaStore).storage} (${failuresText(named)}); the database was not changed`,
        );
      }
      const count = copied.copied + copied.alreadyThere;
      if (count !== manifest.objects.count)
        throw new BackupError(
          `${manifest.objects.index} lists ${count} variants, the manifest says ${manifest.objects.count}`,
        );
      objects = { restored: copied.copied, alreadyThere: copied.alreadyThere, bytes: copied.bytes };
      if (opts.webhookKeyTo) writeWebhookKey(dir, manifest, opts.webhookKeyTo);
      objectsDone = performance.now();
    },
  });
  const done = performance.now();
  return {
    manifest,
    tables: db.tables.length,
    rows: db.tables.reduce((n, t) => n + t.rows, 0),
    objects,
    upgradedWith: db.upgradedWith,
    webhookKeyWrittenTo: opts.webhookKeyTo ?? null,
    durationsMs: {
      objects: Math.round(objectsDone - started),
      database: Math.round(done - objectsDone),
      total: Math.round(done - started),
    },
  };
}
