import { describe, expect, test } from "bun:test";
import { isSameSiteForm } from "./form-origin.ts";

const BASE = "https://market.example.com";
const post = (headers: Record<string, string>) =>
  new Request(`http://10.0.0.7:8080/listings/1/inquiry`, {
    method: "POST",
    headers: { host: "10.0.0.7:8080", ...headers },
  });

describe("isSameSiteForm", () => {
  test("a post from the site's own page is accepted", () => {
    expect(isSameSiteForm(post({ origin: BASE, "sec-fetch-site": "same-origin" }), BASE)).toBe(true);
    // Behind a proxy under another name: the request's own host counts as the site.
    expect(isSameSiteForm(post({ origin: "http://10.0.0.7:8080" }), BASE)).toBe(true);
  });

  test("a client that says nothing about where it posted from (a script) is accepted", () => {
    expect(isSameSiteForm(post({}), BASE)).toBe(true);
    expect(isSameSiteForm(post({ "sec-fetch-site": "none" }), BASE)).toBe(true);
  });

  test("a post from another site, a sandboxed frame or a garbled Origin is refused", () => {
    expect(isSameSiteForm(post({ origin: "https://evil.example" }), BASE)).toBe(false);
    expect(isSameSiteForm(post({ "sec-fetch-site": "cross-site" }), BASE)).toBe(false);
    expect(
      isSameSiteForm(post({ "sec-fetch-site": "same-site", origin: "https://shop.market.example.com" }), BASE),
    ).toBe(false);
    expect(isSameSiteForm(post({ origin: "null" }), BASE)).toBe(false);
    expect(isSameSiteForm(post({ origin: "not a url" }), BASE)).toBe(false);
  });
});
