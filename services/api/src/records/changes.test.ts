import { describe, expect, test } from "bun:test";
import { HISTORY_TEXT_LIMIT } from "@pss/contracts";
import { diffDocuments, forHistory } from "./changes.ts";

describe("diffDocuments", () => {
  test("nested objects are compared field by field, lists and values whole; paths sorted", () => {
    const before = {
      status: "DRAFT",
      location: { city: "Austin", state: "TX" },
      financials: { askingPrice: 1, sde: 2 },
      photos: [{ url: "a", sortKey: 1 }],
    };
    const after = {
      status: "FOR_SALE",
      location: { city: "Austin", state: "TX" },
      financials: { askingPrice: 3, sde: 2 },
      photos: [{ url: "b", sortKey: 1 }],
    };
    expect(diffDocuments(before, after)).toEqual([
      { path: "financials.askingPrice", from: 1, to: 3 },
      { path: "photos", from: [{ url: "a", sortKey: 1 }], to: [{ url: "b", sortKey: 1 }] },
      { path: "status", from: "DRAFT", to: "FOR_SALE" },
    ]);
  });

  test("a field or a whole nested object appearing or disappearing gives its leaf paths, with null on the absent side", () => {
    expect(
      diffDocuments({ title: "x", property: { rentData: { amount: 5 } } }, { financing: { sbaPrequalified: false } }),
    ).toEqual([
      { path: "financing.sbaPrequalified", from: null, to: false },
      { path: "property.rentData.amount", from: 5, to: null },
      { path: "title", from: "x", to: null },
    ]);
    expect(diffDocuments(undefined, { name: "Jane", profile: { bio: "b" } })).toEqual([
      { path: "name", from: null, to: "Jane" },
      { path: "profile.bio", from: null, to: "b" },
    ]);
  });

  test("equal documents, whatever their key order, have no differences", () => {
    expect(diffDocuments({ a: 1, b: { c: [1, { d: 2, e: 3 }] } }, { b: { c: [1, { e: 3, d: 2 }] }, a: 1 })).toEqual([]);
  });
});

describe("forHistory", () => {
  test("texts over the limit (in code points) are cut with an ellipsis and the entry is marked truncated", () => {
    const long = "🍕".repeat(HISTORY_TEXT_LIMIT + 1);
    const exact = "🍕".repeat(HISTORY_TEXT_LIMIT);
    expect(forHistory([{ path: "description", from: exact, to: long }])).toEqual([
      { path: "description", from: exact, to: `${exact}…`, truncated: true },
    ]);
    expect(forHistory([{ path: "title", from: null, to: "short" }])).toEqual([
      { path: "title", from: null, to: "short" },
    ]);
  });

  test("the cut counts code points exactly as Array.from does, whatever mix of pairs, lone surrogates and plain text", () => {
    const reference = (text: string) => {
      const points = Array.from(text);
      return points.length <= HISTORY_TEXT_LIMIT ? text : `${points.slice(0, HISTORY_TEXT_LIMIT).join("")}…`;
    };
    const pieces = ["a", "é", "🍕", "\ud83c", "\udf55", " ", "漢"];
    let seed = 11;
    for (let round = 0; round < 300; round++) {
      let text = "";
      const length = HISTORY_TEXT_LIMIT - 5 + (round % 20);
      for (let i = 0; i < length; i++) text += pieces[(seed = (seed * 48271) % 2147483647) % pieces.length];
      const [change] = forHistory([{ path: "description", from: null, to: text }]);
      expect(change!.to).toBe(reference(text));
      expect(change!.truncated === true).toBe(reference(text) !== text);
    }
  });

  test("texts inside lists are cut too", () => {
    const url = `https://images.example.com/${"a".repeat(HISTORY_TEXT_LIMIT)}`;
    const [change] = forHistory([{ path: "photos", from: null, to: [{ url, sortKey: 1 }] }]);
    expect(change!.truncated).toBe(true);
    expect((change!.to as { url: string }[])[0]!.url).toBe(`${url.slice(0, HISTORY_TEXT_LIMIT)}…`);
  });
});
