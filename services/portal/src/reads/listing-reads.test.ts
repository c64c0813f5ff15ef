import { describe, expect, test } from "bun:test";
import { parseAfter } from "./listing-reads.ts";

describe("the listings list's page position", () => {
  test("is the previous page's last write time and listing ID; anything else starts from the first page", () => {
    expect(parseAfter("2026-11-22T20:30:15.123Z|42")).toEqual({ at: "2026-11-22T20:30:15.123Z", id: "42" });
    for (const bad of [undefined, "", "42", "2026-11-22T20:30:15.123Z|0", "2026-11-22|42", "x|y"])
      expect(parseAfter(bad)).toBeNull();
  });
});
