// `admin restore --from <dir>`: checks everything it can before changing anything (the manifest's seal under
// BACKUP_SIGNING_KEY, every file's SHA-256, an empty target database, a schema this release knows), puts the variants back (each checked against
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
import { openKey } from "./key-file.ts";
import { OBJECTS_DIR, readManifest, type Manifest } from "./manifest.ts";

export interface RestoreDeps {
  sql: postgres.Sql;
  /** Checks manifest.sig: a backup it does not vouch for is refused before anything is read from it. */
  signingKey: Buffer;
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

const NO_KEY =
  "the backup holds no webhook secret key (it is left out unless the backup was made with --with-webhook-key)";

/** The backup's key, opened with the passphrase; checked against the id the manifest records. */
function openWebhookKey(dir: string, manifest: Manifest, passphrase: string): Buffer {
  if (!manifest.webhookKey) throw new BackupError(NO_KEY);
  const file = manifest.webhookKey.file;
  const key = openKey(readFileSync(join(dir, file), "utf8"), passphrase, file);
  if (createSecretBox(key).keyId !== manifest.webhookKey.keyId)
    throw new BackupError(`backup file ${file} is damaged: it holds another key than the manifest names`);
  return key;
}

function writeWebhookKey(key: Buffer, to: string) {
  if (existsSync(to)) {
    const present = parseSecretKey(readFileSync(to, "utf8"));
    if (present?.equals(key)) return;
    throw new BackupError(`${to} exists and holds another key: move it away or choose another --webhook-key-to`);
  }
  writeFileSync(to, `${key.toString("base64")}\n`, { mode: 0o600 });
}

export async function restoreBackup(
  deps: RestoreDeps,
  dir: string,
  /** webhookKeyTo: where to write the backup's webhook key, opened with the passphrase (asked for only then). */
  opts: { webhookKeyTo?: string; passphrase?: () => Promise<string> } = {},
): Promise<RestoreResult> {
  const started = performance.now();
  const manifest = readManifest(dir, deps.signingKey);
  await verifyFile(dir, manifest.objects.index, manifest.objects.indexSha256);
  if (manifest.webhookKey) await verifyFile(dir, manifest.webhookKey.file, manifest.webhookKey.sha256);
  if (opts.webhookKeyTo && !manifest.webhookKey) throw new BackupError(NO_KEY);
  // Opened before anything changes: a wrong passphrase stops the restore here.
  const webhookKey = opts.webhookKeyTo ? openWebhookKey(dir, manifest, (await opts.passphrase?.()) ?? "") : null;

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
      if (webhookKey && opts.webhookKeyTo) writeWebhookKey(webhookKey, opts.webhookKeyTo);
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
