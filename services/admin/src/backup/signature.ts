// The backup's seal: an HMAC-SHA256 of manifest.json's exact bytes under BACKUP_SIGNING_KEY, a key that is never
// written into any backup (docs/operations.md, "Backup and restore"). The manifest names every other file with its
// SHA-256 (and every variant is named by its own), so a valid seal vouches for every byte restore loads: an edited
// table file (an added api_keys row is a working key) fails its sum, and a manifest edited to match fails the seal.
import { createHmac, timingSafeEqual } from "node:crypto";
import { BackupError } from "@pss/database/backup";
import { createSecretBox } from "@pss/service-kit";

export const SIGNATURE_FILE = "manifest.sig";
export const SIGNATURE_ALGORITHM = "HMAC-SHA256";

export interface ManifestSignature {
  algorithm: typeof SIGNATURE_ALGORITHM;
  /** The first 8 hex digits of the signing key's SHA-256: which key to look for, never the key. */
  keyId: string;
  /** Hex HMAC-SHA256 of manifest.json's bytes. */
  hmac: string;
}

/** A key's id as every stored secret names its key (`v1.<keyId>.…`): the first 8 hex digits of its SHA-256. */
export const signingKeyId = (key: Buffer) => createSecretBox(key).keyId;

const hmacOf = (manifest: Buffer, key: Buffer) => createHmac("sha256", key).update(manifest).digest();

export function signManifest(manifest: Buffer, key: Buffer): string {
  const signature: ManifestSignature = {
    algorithm: SIGNATURE_ALGORITHM,
    keyId: signingKeyId(key),
    hmac: hmacOf(manifest, key).toString("hex"),
  };
  return `${JSON.stringify(signature, null, 2)}\n`;
}

/** Throws, saying why, unless `signatureText` is the seal of exactly these manifest bytes under `key`. */
export function verifyManifest(manifest: Buffer, signatureText: string | null, key: Buffer): void {
  if (signatureText === null)
    throw new BackupError(
      `${SIGNATURE_FILE} is missing: the backup is not signed (made by an earlier build, or the seal was removed), so nothing vouches for its contents; it is refused`,
    );
  let signature: Partial<ManifestSignature>;
  try {
    signature = JSON.parse(signatureText) as Partial<ManifestSignature>;
  } catch {
    throw new BackupError(`${SIGNATURE_FILE} is damaged: not valid JSON`);
  }
  if (signature?.algorithm !== SIGNATURE_ALGORITHM || typeof signature.hmac !== "string")
    throw new BackupError(`${SIGNATURE_FILE} is damaged: not an ${SIGNATURE_ALGORITHM} seal`);
  const ours = signingKeyId(key);
  if (signature.keyId !== ours)
    throw new BackupError(
      `the backup is signed with key ${String(signature.keyId)}, BACKUP_SIGNING_KEY is key ${ours}: restore with the signing key the backup was made with`,
    );
  const given = Buffer.from(signature.hmac, "hex");
  const expected = hmacOf(manifest, key);
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw new BackupError(
      "manifest.json does not match its signature: the backup was changed after it was made; it is refused",
    );
}
