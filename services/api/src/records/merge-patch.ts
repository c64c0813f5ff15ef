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

/** JSON with object keys sorted at every level: equal records give equal text. */
export function stableStringify(value: Json | undefined): string {
  if (value === undefined) return "null";
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(",")}]`;
  if (isObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableStringify(value[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}

export function contentHash(value: Json | undefined): Buffer {
  return Buffer.from(new Bun.CryptoHasher("sha256").update(stableStringify(value)).digest());
}
