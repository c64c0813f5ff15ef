import { describe, expect, test } from "bun:test";
import { BadRequestError } from "./errors.ts";
import { parseIdempotencyKey, requestFingerprint } from "./idempotency.ts";

describe("parseIdempotencyKey", () => {
  test("no header is no key; a bare token and its structured-field string form are the same key", () => {
    expect(parseIdempotencyKey(null)).toBeNull();
    expect(parseIdempotencyKey("8e03978e-40d5-43e8-bc93-6894a57f9324")).toBe("8e03978e-40d5-43e8-bc93-6894a57f9324");
    expect(parseIdempotencyKey('"order-17"')).toBe("order-17");
    expect(parseIdempotencyKey("x".repeat(255))).toHaveLength(255);
  });

  test("empty, too long, or with spaces, control or non-ASCII characters: 400 saying what a key is", () => {
    for (const bad of ["", '""', "x".repeat(256), "a b", "a,b c", "tab\there", "caf\u00e9", "\u0000"]) {
      let thrown: unknown = null;
      try {
        parseIdempotencyKey(bad);
      } catch (err) {
        thrown = err;
      }
      expect([bad, thrown instanceof BadRequestError]).toEqual([bad, true]);
      expect((thrown as Error).message).toContain("Idempotency-Key must be 1-255 visible ASCII characters");
    }
  });
});

describe("requestFingerprint", () => {
  test("method, path with query, and body make the request; any of them changed is another request", () => {
    const base = requestFingerprint("POST", "/v1/listings/1/leads", { name: "Ann", message: "Hi" });
    expect(requestFingerprint("POST", "/v1/listings/1/leads", { name: "Ann", message: "Hi" })).toEqual(base);
    expect(requestFingerprint("PUT", "/v1/listings/1/leads", { name: "Ann", message: "Hi" })).not.toEqual(base);
    expect(requestFingerprint("POST", "/v1/listings/2/leads", { name: "Ann", message: "Hi" })).not.toEqual(base);
    expect(requestFingerprint("POST", "/v1/listings/1/leads?x=1", { name: "Ann", message: "Hi" })).not.toEqual(base);
    expect(requestFingerprint("POST", "/v1/listings/1/leads", { name: "Ann", message: "Hi!" })).not.toEqual(base);
    // No body and an empty one are the same (a POST …/test without a body).
    expect(requestFingerprint("POST", "/x", undefined)).toEqual(requestFingerprint("POST", "/x", null));
  });
});
