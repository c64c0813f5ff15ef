import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { createSecretBox, parseSecretKey, SecretBoxError } from "./secret-box.ts";

describe("secret box", () => {
  const box = createSecretBox(randomBytes(32));

  test("what it encrypts it decrypts, and the stored form does not contain the secret", () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const stored = box.encrypt(secret);
    expect(stored).toStartWith(`v1.${box.keyId}.`);
    expect(stored).not.toContain("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    expect(box.decrypt(stored)).toBe(secret);
    expect(box.encrypt(secret)).not.toBe(stored); // a fresh IV each time
  });

  test("a value encrypted with another key names both key ids instead of decrypting to garbage", () => {
    const other = createSecretBox(randomBytes(32));
    expect(() => box.decrypt(other.encrypt("whsec_x"))).toThrow(
      `the secret was encrypted with another key (key id ${other.keyId}; the configured key's id is ${box.keyId})`,
    );
  });

  test("a tampered or malformed value is refused", () => {
    const stored = box.encrypt("whsec_abc");
    const parts = stored.split(".");
    const sealed = Buffer.from(parts[3]!, "base64url");
    sealed[0]! ^= 1;
    expect(() => box.decrypt([...parts.slice(0, 3), sealed.toString("base64url")].join("."))).toThrow(SecretBoxError);
    expect(() => box.decrypt("whsec_plain")).toThrow("not an encrypted secret");
  });
});

test("keys are 32 bytes in hex or base64; anything else is refused", () => {
  const key = randomBytes(32);
  expect(parseSecretKey(key.toString("hex"))).toEqual(key);
  expect(parseSecretKey(key.toString("base64"))).toEqual(key);
  expect(parseSecretKey(key.toString("base64url"))).toEqual(key);
  expect(parseSecretKey("short")).toBeNull();
  expect(parseSecretKey(randomBytes(16).toString("hex"))).toBeNull();
  expect(parseSecretKey(randomBytes(31).toString("base64"))).toBeNull();
});
