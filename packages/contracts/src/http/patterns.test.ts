import { expect, test } from "bun:test";
import { isValidExternalId, isRecordId, isServiceId } from "./common.ts";
import { isEmail, isHttpUrl } from "../formats.ts";
import { EMAIL_PATTERN, EXTERNAL_ID_PATTERN, HTTP_URL_PATTERN, RECORD_ID_PATTERN } from "./patterns.ts";

test("every URL the http-url pattern accepts is an http(s) URL that parses, with a host", () => {
  const accepted = [
    "https://images.example.com/a.jpg?x=1",
    "HTTP://A",
    "http://127.0.0.1:4000/x",
    "http://[::1]:4000/x",
    "http://[::ffff:127.0.0.1]:8080/a.jpg",
    "http://[1:2:3:4:5:6:1.2.3.4]/",
    "http://a-b.example:65535/%zz#frag",
    "https://x.example/caf\u00e9.jpg",
  ];
  for (const url of accepted) {
    expect({ url, ok: isHttpUrl(url) }).toEqual({ url, ok: true });
    const parsed = new URL(url);
    expect(["http:", "https:"]).toContain(parsed.protocol);
    expect(parsed.hostname.length).toBeGreaterThan(0);
  }
});

test("the http-url pattern refuses what is not a plain absolute http(s) URL", () => {
  for (const url of [
    "",
    "https://",
    "ftp://x.example/a",
    "images/a.jpg",
    "javascript:alert(1)",
    "http://user:pw@x.example/",
    "http://xn--a.example/",
    "http://0.999/",
    "http://x.example:65536/",
    "http://x.example/a b",
    "http://x.example/\u0085",
    "http://[::::]/",
  ]) {
    expect({ url, ok: isHttpUrl(url) }).toEqual({ url, ok: false });
  }
});

test("external IDs: 1-128 characters counted as code points, no controls, no surrounding whitespace, not . or ..", () => {
  for (const id of [
    "a",
    "L-1001",
    "a b",
    "x.",
    ".x",
    "...",
    "caf\u00e9",
    "\u{1F600}".repeat(128),
    "a".repeat(128),
    "a/b",
  ])
    expect({ id, ok: isValidExternalId(id) }).toEqual({ id, ok: true });
  for (const id of [
    "",
    ".",
    "..",
    " a",
    "a ",
    "a\u00a0",
    "\ufeffa",
    "a\u0000b",
    "a\u0085b",
    "a\ufffdb",
    "a\tb",
    "a".repeat(129),
  ])
    expect({ id, ok: isValidExternalId(id) }).toEqual({ id, ok: false });
});

test("record IDs run from 1 to 2147483647 without leading zeros; service IDs are positive bigints", () => {
  for (const id of ["1", "9", "10", "999999999", "1000000000", "2147483647", "2147483639"])
    expect({ id, ok: isRecordId(id) }).toEqual({ id, ok: true });
  for (const id of ["0", "01", "-1", "2147483648", "2147483650", "9999999999", "1.0", "", "1e3"])
    expect({ id, ok: isRecordId(id) }).toEqual({ id, ok: false });
  expect(isServiceId("999999999999999999")).toBe(true);
  expect(isServiceId("0")).toBe(false);
  // The record-ID pattern agrees with plain arithmetic around every boundary it encodes.
  for (let n = 2147483600; n <= 2147483700; n++) expect(isRecordId(String(n))).toBe(n <= 2147483647);
});

test("e-mail addresses", () => {
  for (const ok of ["jane.doe+crm@example.co.uk", "0@0.0", "\u00e9@x.example"]) expect(isEmail(ok)).toBe(true);
  for (const bad of [
    "jane",
    "jane@",
    "@example.com",
    "jane@example",
    "jane doe@example.com",
    "a\u0085b@x.example",
    "a@-x.example",
  ])
    expect(isEmail(bad)).toBe(false);
});

test("every pattern compiles in JavaScript's u mode and names no surrogate (Rust and Python engines cannot)", () => {
  for (const p of [EMAIL_PATTERN, EXTERNAL_ID_PATTERN, HTTP_URL_PATTERN, RECORD_ID_PATTERN]) {
    expect(() => new RegExp(p, "u")).not.toThrow();
    expect(p).not.toMatch(/\\uD[89A-F]/i);
  }
});
