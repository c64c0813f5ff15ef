// Encrypts secrets the service must be able to read back (webhook signing secrets: HMAC needs the secret itself,
// so a hash cannot do). AES-256-GCM with a key from configuration (WEBHOOK_SECRET_KEY): a copy of the database
// alone reveals nothing, and a tampered value fails to decrypt instead of signing with garbage.
// Stored form: `v1.<key id>.<iv>.<ciphertext and tag>` (base64url); the key id (first 8 hex digits of the key's
// SHA-256) says which key a value needs, so a wrong key gives a clear error rather than a failed tag check.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

export interface SecretBox {
  encrypt(plaintext: string): string;
  decrypt(stored: string): string;
  readonly keyId: string;
}

export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SecretBoxError";
  }
}

/** A 32-byte key written as 64 hex digits or as base64 (43/44 characters); null when it is neither. */
export function parseSecretKey(text: string): Buffer | null {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, "hex");
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) {
    const key = Buffer.from(t.replace(/-/g, "+").replace(/_/g, "/"), "base64");
    return key.length === 32 ? key : null;
  }
  return null;
}

export const SECRET_KEY_RULE =
  "must be 32 bytes written as 64 hex digits or as base64 (e.g. the output of `openssl rand -base64 32`)";

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new SecretBoxError("the secret key must be 32 bytes");
  const keyId = createHash("sha256").update(key).digest("hex").slice(0, 8);
  return {
    keyId,
    encrypt(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const sealed = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
      return `v1.${keyId}.${iv.toString("base64url")}.${sealed.toString("base64url")}`;
    },
    decrypt(stored) {
      const [version, id, iv, sealed, ...rest] = stored.split(".");
      if (version !== "v1" || !id || !iv || !sealed || rest.length > 0)
        throw new SecretBoxError("not an encrypted secret");
      if (id !== keyId)
        throw new SecretBoxError(
          `the secret was encrypted with another key (key id ${id}; the configured key's id is ${keyId})`,
        );
      const bytes = Buffer.from(sealed, "base64url");
      if (bytes.length < 16) throw new SecretBoxError("not an encrypted secret");
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
        decipher.setAuthTag(bytes.subarray(bytes.length - 16));
        return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString(
          "utf8",
        );
      } catch {
        throw new SecretBoxError("the encrypted secret is damaged (authentication failed)");
      }
    },
  };
}
