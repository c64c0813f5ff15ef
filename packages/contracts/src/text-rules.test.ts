import { describe, expect, test } from "bun:test";
import {
  MULTILINE_TEXT_PATTERN,
  SINGLE_LINE_TEXT_PATTERN,
  findTextProblem,
  jsonDepthExceeds,
  textProblem,
} from "./text-rules.ts";

describe("textProblem", () => {
  test("ordinary text, accents and emoji (a valid surrogate pair) are fine", () => {
    for (const s of ["", "Jane Broker", "Café Zürich", "Tacos 🌮", "東京"]) expect(textProblem(s, false)).toBeNull();
  });
  test("NUL, DEL and other control characters are refused, naming the code point", () => {
    expect(textProblem("a\u0000b", false)).toContain("U+0000");
    expect(textProblem("a\u007fb", true)).toContain("U+007F");
    expect(textProblem("a\u001bb", true)).toContain("U+001B");
  });
  test("tab, LF and CR only in multi-line text", () => {
    for (const s of ["a\tb", "a\nb", "a\r\nb"]) {
      expect(textProblem(s, true)).toBeNull();
      expect(textProblem(s, false)).toContain("control characters");
    }
  });
  test("a lone high or low surrogate, or a reversed pair, is refused", () => {
    for (const s of ["x\ud800y", "x\udc00y", "x\ud800", "\udc00\ud800"])
      expect(textProblem(s, true)).toContain("surrogate");
  });
  test("the OpenAPI patterns say the same as the function for control characters (u flag)", () => {
    const single = new RegExp(SINGLE_LINE_TEXT_PATTERN, "u");
    const multi = new RegExp(MULTILINE_TEXT_PATTERN, "u");
    // Lone surrogates are stated in words only (see SINGLE_LINE_TEXT_PATTERN).
    for (const s of ["Jane", "Tacos 🌮", "a\tb", "a\nb", "a\u0000b", "a\u007f"]) {
      expect(single.test(s)).toBe(textProblem(s, false) === null);
      expect(multi.test(s)).toBe(textProblem(s, true) === null);
    }
  });
});

describe("findTextProblem", () => {
  test("names the field path of the first bad string, in nested objects and arrays", () => {
    expect(findTextProblem({ location: { city: "A\u0000" } })?.path).toBe("location.city");
    expect(findTextProblem({ photos: [{ url: "ok" }, { url: "b\u0001" }] })?.path).toBe("photos[1].url");
  });
  test("multi-line fields are recognised by their last key wherever they are", () => {
    expect(findTextProblem({ description: "a\nb", broker: { profile: { bio: "c\td" } } })).toBeNull();
    expect(findTextProblem({ title: "a\nb" })?.path).toBe("title");
  });
  test("a text in a list of a multi-line field is single-line; a bad string at the top level has an empty path", () => {
    expect(findTextProblem({ description: ["a\nb"] })?.path).toBe("description[0]");
    expect(findTextProblem("a\u0000")).toEqual({ path: "", message: expect.stringContaining("U+0000") });
    expect(findTextProblem([1, null, { bio: "fine\n" }, "x\ud800"])?.path).toBe("[3]");
  });
  test("field names are checked too", () => {
    expect(findTextProblem({ profile: { ["b\u0000io"]: "x" } })?.path).toBe("profile (a field name)");
  });
});

describe("jsonDepthExceeds", () => {
  test("counts nesting of arrays and objects, not brackets inside strings", () => {
    expect(jsonDepthExceeds('{"a":[{"b":1}]}', 3)).toBe(false);
    expect(jsonDepthExceeds('{"a":[{"b":[1]}]}', 3)).toBe(true);
    expect(jsonDepthExceeds('{"a":"[[[[[[[[{{{{"}', 1)).toBe(false);
    expect(jsonDepthExceeds('{"a":"\\"[[[["}', 1)).toBe(false);
  });
  test("agrees with a character-by-character count on generated texts, hostile escapes included", () => {
    const reference = (text: string, limit: number) => {
      let depth = 0;
      let inString = false;
      for (let i = 0; i < text.length; i++) {
        const c = text[i];
        if (inString) {
          if (c === "\\") i++;
          else if (c === '"') inString = false;
        } else if (c === '"') inString = true;
        else if (c === "[" || c === "{") {
          if (++depth > limit) return true;
        } else if (c === "]" || c === "}") depth--;
      }
      return false;
    };
    const pieces = ["[", "]", "{", "}", '"', "\\", "\\\\", "x", ":", ","];
    let seed = 5;
    for (let round = 0; round < 3000; round++) {
      let text = "";
      for (let i = 0; i < 5 + (round % 40); i++) text += pieces[(seed = (seed * 48271) % 2147483647) % pieces.length];
      for (const limit of [1, 3]) expect(jsonDepthExceeds(text, limit)).toBe(reference(text, limit));
    }
  });
  test("a 400,000-level body is refused without recursion", () => {
    expect(jsonDepthExceeds("[".repeat(400_000) + "]".repeat(400_000), 16)).toBe(true);
  });
});
