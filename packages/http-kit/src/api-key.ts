// API keys: 32 random bytes, base64url, behind a recognisable prefix. Only the SHA-256 hash is stored;
// the key itself is shown once, when created.
// A key's prefix says its mode: pss_live_… writes live records, pss_test_… test records (docs/sandbox.md).
import { randomBytes, createHash } from "node:crypto";
import type { RecordMode } from "@pss/contracts";

const PREFIXES: Record<RecordMode, string> = { live: "pss_live_", test: "pss_test_" };
/** Both prefixes have this length. */
const PREFIX_LENGTH = 9;
const KEY_PATTERN = /^pss_(?:live|test)_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(mode: RecordMode = "live"): string {
  return PREFIXES[mode] + randomBytes(32).toString("base64url");
}

/** Cheap syntactic check before any lookup: anything else cannot be a key we issued. */
export function looksLikeApiKey(candidate: string): boolean {
  return KEY_PATTERN.test(candidate);
}

export function hashApiKey(key: string): Buffer {
  return createHash("sha256").update(key).digest();
}

/** What ops may see of a key: enough to tell keys apart, useless to an attacker. */
export function keyPrefix(key: string): string {
  return key.slice(0, PREFIX_LENGTH + 6);
}

export function authCacheKey(hash: Buffer): string {
  return `pss:auth:${hash.toString("hex")}`;
}

/** Bumped by every revocation: a lookup that read the key before the revocation may not cache it afterwards. */
export function authGenerationKey(hash: Buffer): string {
  return `pss:auth-gen:${hash.toString("hex")}`;
}
