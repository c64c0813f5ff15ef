// The content hash a checkpoint keeps per record: SHA-256 of the body in canonical JSON (object keys sorted),
// so the same content read from NDJSON or CSV, in any key order, hashes the same.
import { createHash } from "node:crypto";

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

export function contentHash(body: unknown): string {
  return createHash("sha256").update(canonicalJson(body)).digest("base64url");
}
