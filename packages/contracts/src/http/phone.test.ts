import { expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { Phone } from "./common.ts";

test("a phone is accepted as people write it: country code, area code in parentheses, dots or dashes", () => {
  for (const phone of [
    "+1 512 555 0100",
    "(512) 555-0100",
    "+1 (512) 555-0100",
    "512.555.0100",
    "+44 20 7946 0958",
    "55501",
  ])
    expect([phone, Value.Check(Phone, phone)]).toEqual([phone, true]);
});

test("a phone without enough characters, with letters, or not ending in a digit is refused", () => {
  for (const phone of [
    "5550",
    "call 555 0100",
    "+1 512 555 010-",
    "555 0100 (",
    ")512 555 0100",
    "++1 512 555 0100",
    `1${"0".repeat(40)}`,
  ])
    expect([phone, Value.Check(Phone, phone)]).toEqual([phone, false]);
});
