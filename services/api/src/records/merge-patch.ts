// JSON Merge Patch (RFC 7396), which is exactly the spec's update semantics: nested objects merge field by
// field, arrays replace the whole list, omitted fields keep their value, and an explicit null removes a field.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function mergePatch(target: Json | undefined, patch: Json | undefined): Json | undefined {
  if (patch === undefined) return target;
  if (!isObject(patch)) return patch;
  const result: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) delete result[key];
    else {
      const merged = mergePatch(result[key], value);
      if (merged !== undefined) result[key] = merged;
    }
  }
  return result;
}

/** Removes empty objects and empty arrays so "cleared" and "never set" have one canonical form. */
export function pruneEmpty(value: Json): Json | undefined {
  if (Array.isArray(value)) return value.length === 0 ? undefined : value.map((v) => pruneEmpty(v) ?? null);
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) {
    const pruned = pruneEmpty(v);
    if (pruned !== undefined) out[k] = pruned;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

/**
 * JSON with object keys sorted at every level: equal records give equal text. The stored content hashes are
 * of this exact text, so its output must never change (merge-patch.test.ts holds it to the first, plain
 * implementation). It runs on every PUT and every field diff, hence the native fast path below.
 */
export function stableStringify(value: Json | undefined): string {
  if (value === undefined) return "null";
  // Fast path: a copy with keys inserted in sorted order, written by the native JSON.stringify. Engines order
  // integer-like keys ("7") first whatever the insertion order, so objects with one (or with a "__proto__"
  // member) take the one-pass writer.
  const sorted = sortedCopy(value);
  return sorted === UNSORTABLE ? appendJson("", value) : JSON.stringify(sorted);
}

const UNSORTABLE = Symbol("integer-like key");
const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/;

function sortedCopy(value: Json): Json | typeof UNSORTABLE {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    const out: Json[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      const copy = item === undefined ? null : sortedCopy(item);
      if (copy === UNSORTABLE) return UNSORTABLE;
      out[i] = copy;
    }
    return out;
  }
  const keys = Object.keys(value).sort();
  const out: JsonObject = {};
  for (const key of keys) {
    // Assigning "__proto__" would set the copy's prototype instead of a member.
    if (key === "__proto__" || ARRAY_INDEX.test(key)) return UNSORTABLE;
    const item = value[key];
    const copy = item === undefined ? null : sortedCopy(item);
    if (copy === UNSORTABLE) return UNSORTABLE;
    out[key] = copy;
  }
  return out;
}

function appendJson(out: string, value: Json): string {
  if (typeof value === "string") return out + JSON.stringify(value);
  if (typeof value === "number") return out + (Number.isFinite(value) ? String(value) : "null");
  if (value === null || typeof value !== "object") return out + (value === null ? "null" : String(value));
  if (Array.isArray(value)) {
    out += "[";
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ",";
      const item = value[i];
      out = item === undefined ? out + "null" : appendJson(out, item);
    }
    return out + "]";
  }
  const keys = Object.keys(value).sort();
  out += "{";
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const item = value[key];
    out += (i > 0 ? "," : "") + JSON.stringify(key) + ":";
    out = item === undefined ? out + "null" : appendJson(out, item);
  }
  return out + "}";
}

export function contentHash(value: Json | undefined): Buffer {
  return new Bun.CryptoHasher("sha256").update(stableStringify(value)).digest() as Buffer;
}
