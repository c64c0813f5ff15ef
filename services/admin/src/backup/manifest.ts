// The backup directory's table of contents (manifest.json), written last: a directory without one is an
// interrupted backup and is refused. It names every file with its SHA-256, so a damaged file is named on restore.
//
//   manifest.json            this file
//   database/<table>.copy.gz each table's rows, PostgreSQL COPY text format, gzip (@pss/database/backup)
//   objects/<ab>/<name>      every stored image variant; the name is the SHA-256 of its bytes
//   objects.txt              the variant names, one a line (restore puts exactly these back)
//   webhook-secret-key       WEBHOOK_SECRET_KEY (mode 0600), unless --without-webhook-key
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BackupError, type DatabaseDump } from "@pss/database/backup";

export const MANIFEST_FILE = "manifest.json";
export const OBJECTS_DIR = "objects";
export const OBJECTS_INDEX = "objects.txt";
export const WEBHOOK_KEY_FILE = "webhook-secret-key";
export const FORMAT = "pss-backup";
export const FORMAT_VERSION = 1;

export interface Manifest {
  format: typeof FORMAT;
  formatVersion: number;
  createdAt: string;
  /** The database snapshot: nothing committed after `at` is in the backup. */
  recoveryPoint: { at: string; snapshot: string; serverVersion: string };
  database: DatabaseDump;
  objects: { store: Record<string, string>; count: number; bytes: number; index: string; indexSha256: string };
  /** keyId: the first 8 hex digits of the key's SHA-256, as in every stored secret (`v1.<keyId>.…`). */
  webhookKey: { file: string; keyId: string; sha256: string } | null;
  durationsMs: { database: number; objects: number; total: number };
}

export function readManifest(dir: string): Manifest {
  const path = join(dir, MANIFEST_FILE);
  if (!existsSync(dir)) throw new BackupError(`no backup at ${dir}: the directory does not exist`);
  if (!existsSync(path))
    throw new BackupError(`no backup at ${dir}: ${MANIFEST_FILE} is missing (an interrupted backup has none)`);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(path, "utf8")) as Manifest;
  } catch {
    throw new BackupError(`backup file ${MANIFEST_FILE} is damaged: not valid JSON`);
  }
  if (manifest?.format !== FORMAT) throw new BackupError(`${path} is not a backup of this service`);
  if (manifest.formatVersion > FORMAT_VERSION)
    throw new BackupError(
      `the backup's format ${manifest.formatVersion} is newer than this release reads (${FORMAT_VERSION}): restore with a newer release`,
    );
  if (!manifest.database?.tables || !manifest.objects || !manifest.recoveryPoint)
    throw new BackupError(`backup file ${MANIFEST_FILE} is damaged: parts are missing`);
  // Files are only ever where backup.ts puts them: a manifest naming another path is not trusted to read it.
  const misplaced =
    manifest.database.tables.find((t) => t.file !== `database/${t.name}.copy.gz` || !/^[a-z0-9_]+$/.test(t.name))
      ?.file ??
    (manifest.objects.index !== OBJECTS_INDEX ? manifest.objects.index : undefined) ??
    (manifest.webhookKey && manifest.webhookKey.file !== WEBHOOK_KEY_FILE ? manifest.webhookKey.file : undefined);
  if (misplaced !== undefined)
    throw new BackupError(`backup file ${MANIFEST_FILE} is damaged: it names '${misplaced}', not a file of a backup`);
  return manifest;
}
