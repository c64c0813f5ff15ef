import { describe, expect, test } from "bun:test";
import { csrfTokenFor, isCsrfTokenFor, isTokenText, newToken, sha256 } from "./tokens.ts";

describe("portal tokens", () => {
  test("tokens are 32 random bytes in base64url, never the same twice; only their hash is stored", () => {
    const a = newToken();
    const b = newToken();
    expect(isTokenText(a)).toBe(true);
    expect(a).not.toBe(b);
    expect(sha256(a).length).toBe(32);
    expect(sha256(a).equals(sha256(a))).toBe(true);
    expect(isTokenText("short")).toBe(false);
    expect(isTokenText(undefined)).toBe(false);
  });

  test("a form's CSRF token belongs to its secret: another secret's token, a changed one or none is refused", () => {
    const secret = newToken();
    const token = csrfTokenFor(secret);
    expect(isCsrfTokenFor(secret, token)).toBe(true);
    expect(isCsrfTokenFor(newToken(), token)).toBe(false);
    expect(isCsrfTokenFor(secret, `${token.slice(0, -1)}A`)).toBe(token.endsWith("A"));
    expect(isCsrfTokenFor(secret, undefined)).toBe(false);
    expect(isCsrfTokenFor(secret, "")).toBe(false);
  });
});
