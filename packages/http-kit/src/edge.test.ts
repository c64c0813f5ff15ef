import { describe, expect, test } from "bun:test";
import { EDGE_LIMITS, edgeViolation, pathOf, withAbsoluteUrl } from "./edge.ts";

describe("pathOf", () => {
  test("reads the path of absolute and origin-form URLs", () => {
    expect(pathOf("http://example.test/partner/v1/health?x=1")).toBe("/partner/v1/health");
    expect(pathOf("/partner/v1/health?x=1")).toBe("/partner/v1/health");
    expect(pathOf("http://example.test")).toBe("/");
  });
});

describe("withAbsoluteUrl", () => {
  test("rewrites origin-form and very short hosts, leaves ordinary URLs alone", () => {
    expect(withAbsoluteUrl(new Request("http://example.test/a"))).toBeNull();
    expect(withAbsoluteUrl(new Request("http://api/partner/v1/health"))!.url).toBe(
      "http://localhost/partner/v1/health",
    );
  });
});

describe("edgeViolation", () => {
  const limit = 1000;
  test("an ordinary request passes", () => {
    expect(edgeViolation(new Request("http://example.test/partner/v1/health"), limit)).toBeNull();
  });
  test("standard methods are left to the router (405 with Allow on a known path)", () => {
    for (const method of ["TRACE", "OPTIONS", "DELETE", "QUERY"])
      expect(edgeViolation(new Request("http://example.test/", { method }), limit)).toBeNull();
  });
  test("non-standard methods are 501, long targets 414, large headers 431, large declared bodies 413", () => {
    expect(edgeViolation(new Request("http://example.test/", { method: "PROPFIND" }), limit)?.status).toBe(501);
    expect(
      edgeViolation(new Request(`http://example.test/?q=${"a".repeat(EDGE_LIMITS.maxTargetBytes)}`), limit)?.status,
    ).toBe(414);
    expect(
      edgeViolation(
        new Request("http://example.test/", { headers: { "x-big": "a".repeat(EDGE_LIMITS.maxHeaderBytes) } }),
        limit,
      )?.status,
    ).toBe(431);
    expect(
      edgeViolation(
        new Request("http://example.test/", { method: "PUT", headers: { "content-length": "1001" } }),
        limit,
      )?.status,
    ).toBe(413);
  });
});
