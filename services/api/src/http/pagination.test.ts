import { describe, expect, test } from "bun:test";
import { encodeCursor, parsePageQuery } from "./pagination.ts";

const since = new Date("2024-05-01T00:00:00.000Z");
const raw = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

describe("page cursors", () => {
  test("a cursor brings back its position and the pass's updatedSince", () => {
    const cursor = encodeCursor({ xid: "18446744073709551615", id: "42" }, since);
    expect(parsePageQuery({ cursor })).toEqual({
      limit: 100,
      after: { xid: "18446744073709551615", id: "42" },
      updatedSince: since,
    });
    expect(parsePageQuery({ cursor: encodeCursor({ xid: "7", id: "1" }, null), limit: "5" })).toEqual({
      limit: 5,
      after: { xid: "7", id: "1" },
      updatedSince: null,
    });
  });

  test("an updatedSince given with the cursor wins over the one inside it", () => {
    const later = "2024-06-01T00:00:00Z";
    expect(
      parsePageQuery({ cursor: encodeCursor({ xid: "7", id: "1" }, since), updatedSince: later }).updatedSince,
    ).toEqual(new Date(later));
  });

  test("a cursor from before the commit-safe order restarts the pass from its instant instead of failing", () => {
    expect(parsePageQuery({ cursor: raw(["2024-05-01T00:00:00.000Z", "12"]) })).toEqual({
      limit: 100,
      after: null,
      updatedSince: since,
    });
  });

  const refused: [string, string][] = [
    ["not base64 JSON", "%%%"],
    ["a JSON object", raw({ a: 1 })],
    ["a position beyond 64 bits", raw(["w1", "18446744073709551616", "1", null])],
    ["a non-numeric position", raw(["w1", "1; DROP TABLE", "1", null])],
    ["an id beyond 18 digits", raw(["w1", "1", "1234567890123456789", null])],
    ["a bad date inside", raw(["w1", "1", "1", "yesterday"])],
    ["an unknown version", raw(["w9", "1", "1", null])],
    ["an old cursor with a bad id", raw(["2024-01-01T00:00:00Z", "x"])],
  ];
  for (const [label, cursor] of refused) {
    test(`${label} is refused with a sentence about the cursor`, () => {
      expect(() => parsePageQuery({ cursor })).toThrow(
        "cursor is not valid; pass nextCursor from the previous page unchanged",
      );
    });
  }
});
