import { expect, test } from "bun:test";
import { canonicalJson, contentHash } from "./content-hash.ts";

test("the same content hashes the same whatever the key order; any change changes it", () => {
  expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: null }], c: "x" } })).toBe('{"a":{"c":"x","d":[2,{"y":null,"z":1}]},"b":1}');
  expect(contentHash({ a: 1, b: { c: 2 } })).toBe(contentHash({ b: { c: 2 }, a: 1 }));
  expect(contentHash({ a: 1 })).not.toBe(contentHash({ a: 2 }));
  expect(contentHash({ a: [1, 2] })).not.toBe(contentHash({ a: [2, 1] }));
  expect(contentHash({ a: null })).not.toBe(contentHash({}));
});
