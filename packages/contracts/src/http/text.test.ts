import { expect, test } from "bun:test";
import { Kind } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { Value } from "@sinclair/typebox/value";
import { registerFormats } from "../formats.ts";
import { codePointLength, Text, TEXT_KIND, textLengthProblem } from "./text.ts";

registerFormats();
const title = Text({ minLength: 1, maxLength: 5 });

test("lengths count characters (code points), not UTF-16 code units", () => {
  expect(codePointLength("a\u{1F600}b")).toBe(3);
  expect(codePointLength("\ud800x")).toBe(2); // a lone surrogate counts as one (the HTTP edge refuses it anyway)
  for (const check of [
    (v: unknown) => Value.Check(title, v),
    TypeCompiler.Compile(title).Check.bind(TypeCompiler.Compile(title)),
  ]) {
    expect(check("\u{1F600}".repeat(5))).toBe(true); // 10 code units, 5 characters
    expect(check("\u{1F600}".repeat(6))).toBe(false);
    expect(check("abcde")).toBe(true);
    expect(check("abcdef")).toBe(false);
    expect(check("")).toBe(false);
    expect(check(5)).toBe(false);
  }
});

test("the schema is plain JSON Schema for documents, and names the problem for messages", () => {
  expect(JSON.parse(JSON.stringify(title))).toEqual({ type: "string", minLength: 1, maxLength: 5 });
  expect((title as any)[Kind]).toBe(TEXT_KIND);
  expect(textLengthProblem(title, "abcdef")).toBe("maxLength");
  expect(textLengthProblem(title, "")).toBe("minLength");
  expect(textLengthProblem(title, null)).toBe("type");
  expect(textLengthProblem(title, "\u{1F600}\u{1F600}")).toBeNull();
});
