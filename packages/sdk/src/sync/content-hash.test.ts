import { expect, test } from "bun:test";
import { contentHash } from "./content-hash.ts";

test("the hash follows the JSON text sent: any change of content changes it", () => {
  const body = { status: "FOR_SALE", financials: { askingPrice: 1 } };
  expect(contentHash(JSON.stringify(body))).toBe(contentHash(JSON.stringify(structuredClone(body))));
  expect(contentHash(JSON.stringify(body))).toMatch(/^[A-Za-z0-9_-]{43}$/);
  for (const changed of [
    { ...body, status: "SOLD" },
    { ...body, financials: { askingPrice: 2 } },
    { ...body, title: null },
    { status: "FOR_SALE" },
  ]) {
    expect(contentHash(JSON.stringify(changed))).not.toBe(contentHash(JSON.stringify(body)));
  }
});
