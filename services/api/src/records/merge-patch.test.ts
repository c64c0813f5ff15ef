import { describe, expect, test } from "bun:test";
import { contentHash, mergePatch, pruneEmpty, stableStringify } from "./merge-patch.ts";

describe("mergePatch (RFC 7396)", () => {
  const stored = { title: "Cafe", financials: { askingPrice: 100, revenue: 50 }, photos: [{ url: "a", sortKey: 1 }] };

  test("omitted fields keep their values", () => {
    expect(mergePatch(stored, { title: "Bistro" })).toEqual({ ...stored, title: "Bistro" });
  });

  test("nested objects merge field by field", () => {
    expect(mergePatch(stored, { financials: { revenue: 75 } })).toEqual({ ...stored, financials: { askingPrice: 100, revenue: 75 } });
  });

  test("arrays replace the whole list", () => {
    expect(mergePatch(stored, { photos: [{ url: "b", sortKey: 2 }] })).toEqual({ ...stored, photos: [{ url: "b", sortKey: 2 }] });
  });

  test("null removes a field, nested or top-level", () => {
    expect(mergePatch(stored, { financials: { askingPrice: null }, title: null })).toEqual({ financials: { revenue: 50 }, photos: stored.photos });
    expect(mergePatch(stored, { financials: null })).toEqual({ title: "Cafe", photos: stored.photos });
  });

  test("applying the same patch twice gives the same result as once", () => {
    const patch = { financials: { revenue: null, sde: 5 }, photos: [] };
    const once = mergePatch(stored, patch);
    expect(mergePatch(once, patch)).toEqual(once);
  });
});

describe("canonical form", () => {
  test("empty objects and arrays are pruned, so cleared equals never set", () => {
    expect(pruneEmpty({ a: {}, b: [], c: { d: {} }, e: 1 })).toEqual({ e: 1 });
  });

  test("key order does not change the text or the hash", () => {
    expect(stableStringify({ b: 1, a: { d: 2, c: 3 } })).toBe('{"a":{"c":3,"d":2},"b":1}');
    expect(contentHash({ b: 1, a: 2 }).equals(contentHash({ a: 2, b: 1 }))).toBe(true);
    expect(contentHash({ a: 1 }).equals(contentHash({ a: 2 }))).toBe(false);
  });
});
