// Splits a count range into pre-aggregated buckets (UTC month, day, hour) plus at most two partial hours
// read from the raw rows. The coarsest level covers the middle; each edge falls to the next finer level, so
// any range costs at most ~2x(days in a month + 24 hours) bucket rows and two short index ranges.

export type Granularity = "month" | "day" | "hour";
export interface Segment {
  source: Granularity | "raw";
  /** Inclusive; null = from the beginning. */
  from: Date | null;
  /** Exclusive. */
  to: Date;
}

const LEVELS: readonly Granularity[] = ["month", "day", "hour"];

export function floorTo(g: Granularity, t: Date): Date {
  const d = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0-99 to 1900-1999.
  d.setUTCFullYear(t.getUTCFullYear(), t.getUTCMonth(), g === "month" ? 1 : t.getUTCDate());
  if (g === "hour") d.setUTCHours(t.getUTCHours());
  return d;
}

export function ceilTo(g: Granularity, t: Date): Date {
  const floor = floorTo(g, t);
  if (floor.getTime() === t.getTime()) return floor;
  if (g === "month") floor.setUTCMonth(floor.getUTCMonth() + 1);
  else if (g === "day") floor.setUTCDate(floor.getUTCDate() + 1);
  else floor.setUTCHours(floor.getUTCHours() + 1);
  return floor;
}

function cover(from: Date | null, to: Date, level: number): Segment[] {
  const g = LEVELS[level];
  if (!g) return [{ source: "raw", from, to }];
  const innerFrom = from === null ? null : ceilTo(g, from);
  const innerTo = floorTo(g, to);
  if (innerFrom !== null && innerFrom >= innerTo) return cover(from, to, level + 1);
  const segments: Segment[] = [];
  if (from !== null && innerFrom !== null && from < innerFrom) segments.push(...cover(from, innerFrom, level + 1));
  segments.push({ source: g, from: innerFrom, to: innerTo });
  if (innerTo < to) segments.push(...cover(innerTo, to, level + 1));
  return segments;
}

/** Segments that exactly partition [start, end); empty when the range is empty. */
export function planSegments(start: Date | null, end: Date): Segment[] {
  if (start !== null && start >= end) return [];
  return cover(start, end, 0);
}

/** The order in which segments can occur: edges ascend to months in the middle, then descend. */
export const SLOT_SOURCES = ["raw", "hour", "day", "month", "day", "hour", "raw"] as const;

/**
 * The segments laid out in SLOT_SOURCES order, one (from, to) per slot; an unused slot gets an empty range.
 * One fixed query shape for every range lets PostgreSQL reuse one prepared plan.
 */
export function toSlots(segments: Segment[], beginning: Date): { from: Date; to: Date }[] {
  let next = 0;
  const slots = SLOT_SOURCES.map((source) => {
    const s = segments[next];
    if (s && s.source === source) {
      next++;
      return { from: s.from ?? beginning, to: s.to };
    }
    return { from: beginning, to: beginning };
  });
  if (next !== segments.length)
    throw new Error(`segments do not fit the slot order: ${segments.map((s) => s.source).join(",")}`);
  return slots;
}
