import { describe, expect, test } from "bun:test";
import { LEAD_ROUTES, parseBefore } from "./request-reads.ts";

describe("the request log's reads", () => {
  test("the lead routes are recognised by path, and nothing else is", () => {
    const lead = new RegExp(LEAD_ROUTES);
    for (const path of [
      "/partner/v1/offices/12/leads/count",
      "/partner/v1/offices/12/leads/count?from=2026-01-01",
      "/partner/v1/organizations/3/leads/count",
      "/partner/v1/test/listings/abc/leads",
    ])
      expect(lead.test(path)).toBe(true);
    for (const path of [
      "/partner/v1/listings/leads-bakery",
      "/partner/v1/listings/x/report",
      "/partner/v1/offices/12/leadsx/count",
    ])
      expect(lead.test(path)).toBe(false);
  });

  test("a page position is the last row's time and request ID", () => {
    expect(parseBefore("2026-11-22T20:30:15.123Z|req-1")).toEqual({
      at: "2026-11-22T20:30:15.123Z",
      requestId: "req-1",
    });
    expect(parseBefore("2026-11-22T20:30:15.123Z|bad id")).toBeNull();
    expect(parseBefore(undefined)).toBeNull();
  });
});
