// Field-level differences between two versions of a record: what a dry run reports (changedPaths) and what the
// change history keeps ([{path, from, to}]). One function for both, over the same canonical documents the PUT
// hashes, so a dry run names exactly the paths the real PUT then records.
import { HISTORY_TEXT_LIMIT, type FieldChange } from "@pss/contracts";
import { stableStringify, type Json } from "./merge-patch.ts";

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Changed leaf paths, sorted: nested objects are compared field by field (financials.askingPrice), lists and
 * values as a whole (photos). A field absent on one side is null there.
 */
export function diffDocuments(before: unknown, after: unknown): FieldChange[] {
  const out: FieldChange[] = [];
  walk(before, after, "", out);
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function walk(a: unknown, b: unknown, path: string, out: FieldChange[]): void {
  const aNested = a === undefined || a === null || isObject(a);
  const bNested = b === undefined || b === null || isObject(b);
  if ((isObject(a) || isObject(b)) && aNested && bNested) {
    const left = (a ?? {}) as Obj;
    const right = (b ?? {}) as Obj;
    for (const key of new Set([...Object.keys(left), ...Object.keys(right)]))
      walk(left[key], right[key], path ? `${path}.${key}` : key, out);
    return;
  }
  const from = (a ?? null) as Json;
  const to = (b ?? null) as Json;
  // Two lists (or a list and an object) compare by canonical text; anything with a plain value or null compares as itself.
  const bothStructured = typeof from === "object" && from !== null && typeof to === "object" && to !== null;
  if (bothStructured ? stableStringify(from) !== stableStringify(to) : from !== to) out.push({ path, from, to });
}

/** Cuts a string to HISTORY_TEXT_LIMIT characters (code points); reports whether it did. */
function cut(text: string): { text: string; cut: boolean } {
  if (text.length <= HISTORY_TEXT_LIMIT) return { text, cut: false };
  // The UTF-16 index where the first HISTORY_TEXT_LIMIT code points end (a surrogate pair is one).
  let end = 0;
  for (let points = 0; points < HISTORY_TEXT_LIMIT && end < text.length; points++) {
    const c = text.charCodeAt(end);
    end +=
      c >= 0xd800 && c <= 0xdbff && end + 1 < text.length && (text.charCodeAt(end + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
  }
  if (end >= text.length) return { text, cut: false };
  return { text: `${text.slice(0, end)}…`, cut: true };
}

function truncateValue(value: unknown, state: { cut: boolean }): unknown {
  if (typeof value === "string") {
    const r = cut(value);
    if (r.cut) state.cut = true;
    return r.text;
  }
  if (Array.isArray(value)) return value.map((v) => truncateValue(v, state));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, truncateValue(v, state)]));
  return value;
}

/** What the history stores: every text longer than HISTORY_TEXT_LIMIT cut, the entry marked `truncated`. */
export function forHistory(changes: FieldChange[]): FieldChange[] {
  return changes.map((c) => {
    const state = { cut: false };
    const from = truncateValue(c.from, state);
    const to = truncateValue(c.to, state);
    return state.cut ? { path: c.path, from, to, truncated: true as const } : { path: c.path, from, to };
  });
}
