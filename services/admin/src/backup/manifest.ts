// The backup's table of contents (manifest.json), written last: a directory without one is an interrupted backup
// and is refused. It names every file with its SHA-256, so a damaged file is named on restore, and it is sealed
// (manifest.sig, signature.ts) with BACKUP_SIGNING_KEY, which no backup holds: restore checks the seal before it
// trusts anything the manifest says.
//
//   manifest.json            this file
//   manifest.sig             its HMAC-SHA256 under BACKUP_SIGNING_KEY (written just before it)
//   database/<table>.copy.gz each table's rows, PostgreSQL COPY text format, gzip (@pss/database/backup)
//   objects/<ab>/<name>      every stored image variant; the name is the SHA-256 of its bytes
//   objects.txt              the variant names, one a line (restore puts exactly these back)
//   webhook-secret-key.enc   WEBHOOK_SECRET_KEY sealed with a passphrase (key-file.ts), only with --with-webhook-key
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BackupError, type DatabaseDump } from "@pss/database/backup";
import { SIGNATURE_FILE, verifyManifest } from "./signature.ts";

export const MANIFEST_FILE = "manifest.json";
export const OBJECTS_DIR = "objects";
export const OBJECTS_INDEX = "objects.txt";
export const WEBHOOK_KEY_FILE = "webhook-secret-key.enc";
export const FORMAT = "pss-backup";
/** 2: signed, and the webhook key (when there) sealed with a passphrase; 1 was neither and is refused. */
export const FORMAT_VERSION = 2;

export interface Manifest {
  format: typeof FORMAT;
  formatVersion: number;
  createdAt: string;
  /** The database snapshot: nothing committed after `at` is in the backup. */
  recoveryPoint: { at: string; snapshot: string; serverVersion: string };
  database: DatabaseDump;
  objects: { store: Record<string, string>; count: number; bytes: number; index: string; indexSha256: string };
  /**
   * Only with --with-webhook-key: the file holding WEBHOOK_SECRET_KEY sealed with a passphrase. keyId: the first 8
   * hex digits of the key's SHA-256, as in every stored secret (`v1.<keyId>.…`).
   */
  webhookKey: { file: string; keyId: string; sha256: string; sealed: "scrypt+aes-256-gcm" } | null;
  durationsMs: { database: number; objects: number; total: number };
}

/** The manifest, once its seal under `signingKey` holds (read once: what is checked is what is parsed). */
export function readManifest(dir: string, signingKey: Buffer): Manifest {
  const path = join(dir, MANIFEST_FILE);
  if (!existsSync(dir)) throw new BackupError(`no backup at ${dir}: the directory does not exist`);
  if (!existsSync(path))
    throw new BackupError(`no backup at ${dir}: ${MANIFEST_FILE} is missing (an interrupted backup has none)`);
  const bytes = readFileSync(path);
  const signaturePath = join(dir, SIGNATURE_FILE);
  verifyManifest(bytes, existsSync(signaturePath) ? readFileSync(signaturePath, "utf8") : null, signingKey);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(bytes.toString("utf8")) as Manifest;
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
