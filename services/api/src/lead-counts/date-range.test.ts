import { describe, expect, test } from "bun:test";
import { BadRequestError } from "@pss/http-kit";
import { parseInstant } from "../http/instants.ts";
import { parseDateRange } from "./date-range.ts";

function message(query: Record<string, unknown>): string {
  try {
    parseDateRange(query);
  } catch (err) {
    expect(err).toBeInstanceOf(BadRequestError);
    return (err as Error).message;
  }
  throw new Error("expected a 400");
}

describe("parseDateRange", () => {
  test("both bounds optional: none given means from the beginning until now", () => {
    expect(parseDateRange({})).toEqual({ start: null, end: null });
  });

  test("offsets and Z name the same instant", () => {
    const r = parseDateRange({ startDate: "2024-05-01T02:00:00+02:00", endDate: "2024-05-02T00:00:00Z" });
    expect(r.start!.toISOString()).toBe("2024-05-01T00:00:00.000Z");
    expect(r.end!.toISOString()).toBe("2024-05-02T00:00:00.000Z");
    expect(parseDateRange({ startDate: "2024-05-01T02:00:00+0200" }).start!.toISOString()).toBe(
      "2024-05-01T00:00:00.000Z",
    );
  });

  test("equal bounds are an empty range, not an error", () => {
    expect(parseDateRange({ startDate: "2024-05-01T00:00:00Z", endDate: "2024-05-01T00:00:00Z" }).start).not.toBeNull();
  });

  test("a date without a time zone, a date only, or nonsense is a 400 naming the parameter and the ISO 8601 rule", () => {
    for (const [name, value] of [
      ["startDate", "2024-05-01T00:00:00"],
      ["endDate", "2024-05-01"],
      ["startDate", "yesterday"],
      ["endDate", "2024-02-30T00:00:00Z"],
      ["startDate", ""],
    ] as const) {
      const m = message({ [name]: value });
      expect(m).toStartWith("Invalid query parameters: dates must be ISO 8601");
      expect(m).toContain(name);
    }
  });

  test("startDate after endDate is a 400 naming both", () => {
    const m = message({ startDate: "2024-06-01T00:00:00Z", endDate: "2024-05-01T00:00:00Z" });
    expect(m).toStartWith("Invalid query parameters: dates must be ISO 8601");
    expect(m).toContain("startDate (2024-06-01T00:00:00Z) is after endDate (2024-05-01T00:00:00Z)");
    expect(message({ startDate: "1950-06-01T00:00:00Z", endDate: "1940-05-01T00:00:00Z" })).toContain(
      "is after endDate",
    );
  });

  test("unknown or repeated parameters are a 400", () => {
    expect(message({ from: "2024-05-01T00:00:00Z" })).toContain("unknown parameter 'from'");
    expect(message({ startDate: ["2024-05-01T00:00:00Z", "2024-05-02T00:00:00Z"] })).toContain(
      "startDate is given more than once",
    );
  });

  test("bounds before 1970 mean from the beginning (no lead is older)", () => {
    expect(parseDateRange({ startDate: "0001-01-01T00:00:00Z", endDate: "1900-01-01T00:00:00Z" })).toEqual({
      start: null,
      end: new Date(0),
    });
  });
});

describe("parseInstant", () => {
  test("sub-millisecond digits round up so that stored millisecond times compare exactly", () => {
    expect(parseInstant("2024-05-01T00:00:00.0005Z")).toBe(Date.parse("2024-05-01T00:00:00.001Z"));
    expect(parseInstant("2024-05-01T00:00:00.123000Z")).toBe(Date.parse("2024-05-01T00:00:00.123Z"));
  });
});
