// The webhook secret key in a backup, only when asked (`admin backup --with-webhook-key`), sealed with a
// passphrase the operator gives on standard input: scrypt (N=2^17, r=8, p=1: about 128 MiB and a fraction of a
// second per try) derives an AES-256-GCM key; the file holds the salt, nonce, ciphertext and tag. A copy of the
// backup alone then no longer opens every partner's webhook signing secret stored in it.
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from "node:crypto";
import { BackupError } from "@pss/database/backup";

export const MIN_PASSPHRASE_LENGTH = 16;
const SCRYPT = { N: 2 ** 17, r: 8, p: 1 } as const;
const FORMAT = "pss-backup-key";

interface SealedKey {
  format: typeof FORMAT;
  kdf: { name: "scrypt"; N: number; r: number; p: number; salt: string };
  cipher: "aes-256-gcm";
  iv: string;
  ciphertext: string;
  tag: string;
}

const derive = (passphrase: string, salt: Buffer, kdf: { N: number; r: number; p: number }) =>
  scryptSync(passphrase.normalize("NFC"), salt, 32, { ...kdf, maxmem: 256 * kdf.N * kdf.r });

/** The passphrase as given on standard input: one line, its line ending dropped; refused when too short. */
export function passphraseFrom(stdin: string, flag: string): string {
  const passphrase = stdin.replace(/\r?\n$/, "");
  if (passphrase.length < MIN_PASSPHRASE_LENGTH)
    throw new BackupError(
      `${flag} reads the passphrase for the webhook key from standard input: at least ${MIN_PASSPHRASE_LENGTH} characters, got ${passphrase.length === 0 ? "none" : `${passphrase.length}`}`,
    );
  return passphrase;
}

export function sealKey(key: Buffer, passphrase: string): string {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", derive(passphrase, salt, SCRYPT), iv);
  const ciphertext = Buffer.concat([cipher.update(key), cipher.final()]);
  const sealed: SealedKey = {
    format: FORMAT,
    kdf: { name: "scrypt", ...SCRYPT, salt: salt.toString("base64") },
    cipher: "aes-256-gcm",
    iv: iv.toString("base64"),
    ciphertext: ciphertext.toString("base64"),
    tag: cipher.getAuthTag().toString("base64"),
  };
  return `${JSON.stringify(sealed, null, 2)}\n`;
}

export function openKey(text: string, passphrase: string, file: string): Buffer {
  let sealed: SealedKey;
  try {
    sealed = JSON.parse(text) as SealedKey;
  } catch {
    throw new BackupError(`backup file ${file} is damaged: not valid JSON`);
  }
  const kdf = sealed?.kdf;
  const positive = (n: unknown) => Number.isInteger(n) && (n as number) > 0;
  // Bounds, so a damaged file cannot ask for gigabytes of memory.
  if (
    sealed?.format !== FORMAT ||
    kdf?.name !== "scrypt" ||
    sealed.cipher !== "aes-256-gcm" ||
    ![kdf.N, kdf.r, kdf.p].every(positive) ||
    kdf.N > 2 ** 20 ||
    kdf.r * kdf.p > 64
  )
    throw new BackupError(`backup file ${file} is damaged: not a sealed key of this service`);
  try {
    const decipher = createDecipheriv(
      "aes-256-gcm",
      derive(passphrase, Buffer.from(kdf.salt, "base64"), kdf),
      Buffer.from(sealed.iv, "base64"),
    );
    decipher.setAuthTag(Buffer.from(sealed.tag, "base64"));
    const key = Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, "base64")), decipher.final()]);
    if (key.length !== 32) throw new Error("length");
    return key;
  } catch {
    throw new BackupError(`the passphrase does not open ${file} (or the file is damaged): no key was written`);
  }
}
