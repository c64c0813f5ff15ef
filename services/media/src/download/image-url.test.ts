import { describe, expect, test } from "bun:test";
import { MediaFailure } from "../failures.ts";
import { parseImageUrl } from "./image-url.ts";

describe("parseImageUrl", () => {
  const reasonOf = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      return err instanceof MediaFailure ? [err.reason, err.transient] : err;
    }
    return "no failure";
  };

  test("accepts http and https URLs", () => {
    expect(parseImageUrl("https://images.example.com/a.jpg").hostname).toBe("images.example.com");
    expect(parseImageUrl("http://images.example.com:8080/a.jpg").port).toBe("8080");
  });

  test.each([
    "ftp://example.com/a.jpg",
    "file:///etc/passwd",
    "data:image/png;base64,AAAA",
    "gopher://example.com/",
    "javascript:alert(1)",
    "not a url",
  ])("refuses %s permanently as an unsupported URL scheme", (raw) => {
    expect(reasonOf(() => parseImageUrl(raw))).toEqual(["unsupported URL scheme", false]);
  });

  test("resolves a relative redirect against the current URL and checks its scheme again", () => {
    const base = new URL("https://images.example.com/photos/a.jpg");
    expect(parseImageUrl("/b.jpg", base).href).toBe("https://images.example.com/b.jpg");
    expect(reasonOf(() => parseImageUrl("file:///etc/passwd", base))).toEqual(["unsupported URL scheme", false]);
  });

  test("numeric host spellings are normalised, so they cannot dodge the address check", () => {
    expect(parseImageUrl("http://2130706433/x.jpg").hostname).toBe("127.0.0.1");
    expect(parseImageUrl("http://0x7f.1/x.jpg").hostname).toBe("127.0.0.1");
  });
});
