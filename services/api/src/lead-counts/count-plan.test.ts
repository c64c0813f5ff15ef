import { describe, expect, test } from "bun:test";
import { ceilTo, floorTo, planSegments, SLOT_SOURCES, toSlots, type Segment } from "./count-plan.ts";

const at = (iso: string) => new Date(iso);
const iso = (d: Date | null) => d?.toISOString() ?? null;
const brief = (segments: Segment[]) => segments.map((s) => [s.source, iso(s.from), iso(s.to)]);

function expectExactPartition(segments: Segment[], start: Date | null, end: Date) {
  expect(segments[0]!.from?.getTime() ?? null).toBe(start?.getTime() ?? null);
  expect(segments.at(-1)!.to.getTime()).toBe(end.getTime());
  for (let i = 1; i < segments.length; i++) expect(segments[i]!.from!.getTime()).toBe(segments[i - 1]!.to.getTime());
  for (const s of segments) {
    if (s.from) expect(s.from.getTime()).toBeLessThan(s.to.getTime());
    if (s.source !== "raw") {
      if (s.from) expect(floorTo(s.source, s.from).getTime()).toBe(s.from.getTime());
      expect(floorTo(s.source, s.to).getTime()).toBe(s.to.getTime());
    }
  }
}

describe("floorTo / ceilTo", () => {
  test("round to UTC hour, day and month boundaries, leaving aligned instants alone", () => {
    const t = at("2024-02-29T13:45:10.123Z");
    expect(iso(floorTo("hour", t))).toBe("2024-02-29T13:00:00.000Z");
    expect(iso(floorTo("day", t))).toBe("2024-02-29T00:00:00.000Z");
    expect(iso(floorTo("month", t))).toBe("2024-02-01T00:00:00.000Z");
    expect(iso(ceilTo("hour", t))).toBe("2024-02-29T14:00:00.000Z");
    expect(iso(ceilTo("day", t))).toBe("2024-03-01T00:00:00.000Z");
    expect(iso(ceilTo("month", at("2024-12-31T23:59:59.999Z")))).toBe("2025-01-01T00:00:00.000Z");
    expect(iso(ceilTo("day", at("2024-03-01T00:00:00Z")))).toBe("2024-03-01T00:00:00.000Z");
  });
});

describe("planSegments", () => {
  test("a long range uses months in the middle, days and hours towards the edges, raw rows only for partial hours", () => {
    const start = at("2023-03-05T13:27:11.500Z");
    const end = at("2025-07-19T08:03:59Z");
    const segments = planSegments(start, end);
    expect(brief(segments)).toEqual([
      ["raw", "2023-03-05T13:27:11.500Z", "2023-03-05T14:00:00.000Z"],
      ["hour", "2023-03-05T14:00:00.000Z", "2023-03-06T00:00:00.000Z"],
      ["day", "2023-03-06T00:00:00.000Z", "2023-04-01T00:00:00.000Z"],
      ["month", "2023-04-01T00:00:00.000Z", "2025-07-01T00:00:00.000Z"],
      ["day", "2025-07-01T00:00:00.000Z", "2025-07-19T00:00:00.000Z"],
      ["hour", "2025-07-19T00:00:00.000Z", "2025-07-19T08:00:00.000Z"],
      ["raw", "2025-07-19T08:00:00.000Z", "2025-07-19T08:03:59.000Z"],
    ]);
    expectExactPartition(segments, start, end);
  });

  test("without a start, months run from the beginning", () => {
    const end = at("2024-05-10T10:30:00Z");
    const segments = planSegments(null, end);
    expect(brief(segments)).toEqual([
      ["month", null, "2024-05-01T00:00:00.000Z"],
      ["day", "2024-05-01T00:00:00.000Z", "2024-05-10T00:00:00.000Z"],
      ["hour", "2024-05-10T00:00:00.000Z", "2024-05-10T10:00:00.000Z"],
      ["raw", "2024-05-10T10:00:00.000Z", "2024-05-10T10:30:00.000Z"],
    ]);
    expectExactPartition(segments, null, end);
  });

  test("a range inside one hour reads only raw rows; aligned bounds need no raw rows at all", () => {
    expect(brief(planSegments(at("2024-05-10T10:05:00Z"), at("2024-05-10T10:55:00Z")))).toEqual([
      ["raw", "2024-05-10T10:05:00.000Z", "2024-05-10T10:55:00.000Z"],
    ]);
    expect(brief(planSegments(at("2024-05-10T10:00:00Z"), at("2024-05-10T12:00:00Z")))).toEqual([
      ["hour", "2024-05-10T10:00:00.000Z", "2024-05-10T12:00:00.000Z"],
    ]);
    expect(brief(planSegments(at("2024-01-01T00:00:00Z"), at("2025-01-01T00:00:00Z")))).toEqual([
      ["month", "2024-01-01T00:00:00.000Z", "2025-01-01T00:00:00.000Z"],
    ]);
  });

  test("an empty range has no segments", () => {
    expect(planSegments(at("2024-05-10T10:00:00Z"), at("2024-05-10T10:00:00Z"))).toEqual([]);
  });

  test("random ranges are always partitioned exactly, with few bucket rows and at most two raw edges", () => {
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const base = Date.parse("2020-01-01T00:00:00Z");
    const span = 6 * 365 * 24 * 3600 * 1000;
    for (let i = 0; i < 2000; i++) {
      const a = base + Math.floor(rand() * span);
      const b = a + Math.floor(rand() * rand() * span);
      const start = i % 10 === 0 ? null : new Date(a);
      const end = new Date(b + 1);
      const segments = planSegments(start, end);
      expectExactPartition(segments, start, end);
      expect(segments.filter((s) => s.source === "raw").length).toBeLessThanOrEqual(2);
      const rows = (s: Segment, ms: number) => (s.from ? (s.to.getTime() - s.from.getTime()) / ms : 0);
      expect(segments.filter((s) => s.source === "hour").reduce((n, s) => n + rows(s, 3600e3), 0)).toBeLessThanOrEqual(
        46,
      );
      expect(segments.filter((s) => s.source === "day").reduce((n, s) => n + rows(s, 86400e3), 0)).toBeLessThanOrEqual(
        60,
      );
      // Every plan fits the fixed slot layout, and the slots cover the same instants.
      const slots = toSlots(segments, new Date(0));
      const used = slots.filter((x) => x.from < x.to);
      expect(used.map((x) => [x.from.getTime(), x.to.getTime()])).toEqual(
        segments.map((x) => [(x.from ?? new Date(0)).getTime(), x.to.getTime()]),
      );
    }
  });
});

describe("toSlots", () => {
  test("lays segments out as raw, hour, day, month, day, hour, raw; unused slots are empty ranges", () => {
    const beginning = new Date(0);
    const slots = toSlots(planSegments(at("2024-05-10T10:05:00Z"), at("2024-05-12T10:55:00Z")), beginning);
    expect(SLOT_SOURCES).toHaveLength(7);
    expect(slots.map((x) => (x.from < x.to ? [iso(x.from), iso(x.to)] : "empty"))).toEqual([
      ["2024-05-10T10:05:00.000Z", "2024-05-10T11:00:00.000Z"],
      ["2024-05-10T11:00:00.000Z", "2024-05-11T00:00:00.000Z"],
      ["2024-05-11T00:00:00.000Z", "2024-05-12T00:00:00.000Z"],
      "empty",
      "empty",
      ["2024-05-12T00:00:00.000Z", "2024-05-12T10:00:00.000Z"],
      ["2024-05-12T10:00:00.000Z", "2024-05-12T10:55:00.000Z"],
    ]);
    expect(toSlots(planSegments(null, at("2024-05-01T00:00:00Z")), beginning)[3]).toEqual({
      from: beginning,
      to: at("2024-05-01T00:00:00Z"),
    });
  });
});
