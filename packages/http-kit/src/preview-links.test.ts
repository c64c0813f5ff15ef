import { describe, expect, test } from "bun:test";
import type postgres from "postgres";
import { createPreviewLinks, EXPIRY_STEP_SECONDS } from "./preview-links.ts";

// A configured secret: the database is never asked.
const noDatabase = (() => {
  throw new Error("the database must not be used with a configured secret");
}) as unknown as postgres.Sql;
const SECRET = "x".repeat(40);
const links = (now: number, secret = SECRET) =>
  createPreviewLinks({
    sql: noDatabase,
    publicBaseUrl: "https://market.example",
    secret,
    ttlSeconds: 3600,
    now: () => now,
  });
const parts = (url: string) => {
  const u = new URL(url);
  return { path: u.pathname, expires: u.searchParams.get("expires"), signature: u.searchParams.get("signature") };
};

describe("preview links", () => {
  const now = Date.UTC(2026, 0, 1, 12, 0, 10);

  test("a link names the record and expires after the TTL, rounded up to a step (so repeats give the same link)", async () => {
    const url = await links(now).listingUrl(42);
    const { path, expires, signature } = parts(url);
    expect(path).toBe("/preview/listings/42");
    expect(Number(expires) % EXPIRY_STEP_SECONDS).toBe(0);
    expect(Number(expires) * 1000).toBeGreaterThanOrEqual(now + 3600_000);
    expect(Number(expires) * 1000).toBeLessThan(now + 3600_000 + EXPIRY_STEP_SECONDS * 1000);
    expect(await links(now + 1000).listingUrl(42)).toBe(url);
    expect(await links(now).verify("listing", "42", expires, signature)).toBe("valid");
    expect(parts(await links(now).brokerUrl("7")).path).toBe("/preview/brokers/7");
  });

  test("another record, kind, expiry or secret does not verify; a past expiry is expired", async () => {
    const { expires, signature } = parts(await links(now).listingUrl(42));
    expect(await links(now).verify("listing", "43", expires, signature)).toBe("invalid");
    expect(await links(now).verify("broker", "42", expires, signature)).toBe("invalid");
    expect(await links(now).verify("listing", "42", String(Number(expires) + 300), signature)).toBe("invalid");
    expect(await links(now, "y".repeat(40)).verify("listing", "42", expires, signature)).toBe("invalid");
    expect(await links(now + 2 * 3600_000).verify("listing", "42", expires, signature)).toBe("expired");
    for (const [e, s] of [
      [null, signature],
      [expires, null],
      ["1e9", signature],
      [expires, "short"],
    ] as const)
      expect(await links(now).verify("listing", "42", e, s)).toBe("invalid");
  });
});
